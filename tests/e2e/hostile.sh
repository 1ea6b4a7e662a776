#!/usr/bin/env bash
# The hostile corpus (issue 26 item 10): every input of tests/hostile/MANIFEST
# (case files from tests/hostile/inputs, generated files, FIFOs, sockets,
# devices, link loops, report targets, bad options, names and fault specs)
# must give its documented exit status, never end by a signal or pass its
# deadline, leave a schema-valid --json report (unless the input is the
# report target itself), and write nothing but that report: not in the
# working directory, not in TMPDIR, not among the inputs. On ae24178 FIFOs
# and link loops hung, /dev/zero and large shapes exhausted memory, and a
# refused selection left no report.
. "$(dirname "$0")/common.bash"
IN="$SRC/tests/hostile/inputs"
W="$TMP/work"; G="$W/gen"; R="$W/reports"; CWD="$W/cwd"; TD="$W/tmpdir"; LOG="$TMP/logs"
mkdir -p "$G" "$R" "$CWD" "$TD" "$LOG"
DEADLINE="${CG_HOSTILE_DEADLINE:-45}"
good="$SRC/cases/collectives/all_reduce_sum.case"
GOOD_PROGRAM='x = param(ones(2))
y = all_reduce(x, sum)
backward(sum(y))'

# ---- the generated inputs (%NAME in the manifest) ----
long() { python3 -c "import sys; sys.stdout.write(sys.argv[1] * int(sys.argv[2]))" "$1" "$2"; }
{ printf 'case comment_1mb\nworlds 2\n# '; long x 1048576; printf '\n%s\n' "$GOOD_PROGRAM"; } > "$G/comment_1mb.case"
name=$(long n 1048576)
printf 'case name_1mb\nworlds 2\n%s = param(ones(2))\ny = all_reduce(%s, sum)\nbackward(sum(y))\n' "$name" "$name" > "$G/name_1mb.case"
{ printf 'case list_1mb\nworlds 2\nx = param(['; long "1, " 333333; printf '1])\ny = all_reduce(x, sum)\nbackward(sum(y))\n'; } > "$G/list_1mb.case"
{ printf 'case string_1mb\nworlds 2\n%s\nexpect error "' "$GOOD_PROGRAM"; long s 1048576; printf '"\n'; } > "$G/string_1mb.case"
long '#' $((5 << 20)) > "$G/big_5mb.case"
mkdir -p "$G/types/sub" "$G/only_fifo" "$G/loop/sub" "$G/mixed" "$G/targets"
sed 's/^case .*/case types_good/' "$good" > "$G/types/a.case"
mkfifo "$G/types/fifo.case" "$G/only_fifo/x.case" "$G/targets/fifo"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$G/types/sock.case"
ln -s /dev/zero "$G/types/zero.case"
ln -s /dev/null "$G/types/null.case"
ln -s "$G/nowhere" "$G/types/dangling.case"
ln -s loop2 "$G/types/loop1"; ln -s loop1 "$G/types/loop2"
ln -s .. "$G/types/sub/up"
ln -s ../a.case "$G/types/sub/again.case"
sed 's/^case .*/case loop_good/' "$good" > "$G/loop/good.case"
ln -s .. "$G/loop/sub/up"
sed 's/^case .*/case mixed_good/' "$good" > "$G/mixed/good.case"
cp "$IN/trunc_in_function.case" "$G/mixed/trunc.case"
touch "$G/targets/real.json"
ln -s real.json "$G/targets/link.json"

# ---- one run per manifest line ----
expand() { # expand WORD: the manifest's @, % and ^ prefixes
  case "$1" in
    @*) printf '%s' "$IN/${1#@}" ;;
    %*) printf '%s' "$G/${1#%}" ;;
    ^*) printf '%s' "$SRC/cases/${1#^}" ;;
    *) printf '%s' "$1" ;;
  esac
}
n=0
while IFS=$'\t' read -r want name report args why; do
  [ -z "$want" ] || [ "${want#\#}" != "$want" ] && continue
  n=$((n + 1))
  read -ra words <<< "$args"
  cmd=("$BIN")
  [ "$report" = report ] && cmd+=(--json "$R/$name.json")
  for w in "${words[@]}"; do cmd+=("$(expand "$w")"); done
  touch "$W/stamp"
  sleep 0.01 # a file written in the same clock tick as the stamp still counts as newer
  (cd "$CWD" && TMPDIR="$TD" timeout -k 2 "$DEADLINE" "${cmd[@]}" < /dev/null > "$LOG/$name.out" 2>&1)
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    bad "$name ($why): passed the ${DEADLINE} s deadline"
  elif [ "$rc" -gt 128 ]; then
    bad "$name ($why): ended by signal $((rc - 128))"
  elif [ "$rc" != "$want" ]; then
    bad "$name ($why): exit $rc, documented $want"; sed 's/^/    /' "$LOG/$name.out" | head -c 600; echo
  else ok; fi
  if [ "$report" = report ]; then
    [ -s "$R/$name.json" ] && ok || bad "$name ($why): no --json report"
  fi
  # nothing written but the report: inputs, the working directory, TMPDIR
  touched=$(find "$W" "$IN" -newer "$W/stamp" ! -type d ! -path "$R/$name.json" 2>/dev/null | head -5)
  [ -z "$touched" ] && ok || bad "$name ($why): wrote outside its report: $touched"
  [ -z "$(ls -A "$TD")" ] && ok || { bad "$name ($why): left files in TMPDIR: $(ls -A "$TD")"; rm -rf "${TD:?}"/*; }
done < "$SRC/tests/hostile/MANIFEST"
[ "$n" -ge 150 ] && ok || bad "the corpus has $n inputs, wanted at least 150"
echo "$n hostile inputs run"
finish
