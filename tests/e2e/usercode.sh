#!/usr/bin/env bash
# The user-code check from a shell (issue 35 items 1 and 5): its page,
# docs/user-code.md ("Check your own PyTorch code"), runs as written (its python block,
# then each bash line with the exit status its comment names), the reports it
# writes validate (schema /1, junit-10) and `collgrad-check compare` reads
# them; the exit statuses 2 and 3 of a bad usage, a missing function and a hang.
. "$(dirname "$0")/common.bash"
PY="${COLLGRAD_PYTHON:-/usr/bin/python3}"
if ! "$PY" -c "import torch" > /dev/null 2>&1; then
  echo "skipped: $PY cannot import torch (Debian: apt-get install python3-torch)"; exit 77
fi
if [ -n "${CG_SANITIZE:-}${ASAN_OPTIONS:-}" ]; then
  echo "skipped: the user-code check runs no C code; the sanitizer build has nothing to check here"; exit 77
fi
export PATH="$(cd "$(dirname "$BIN")" && pwd):$PATH"   # `collgrad-check` on the page is this build
export PYTHONPATH="$SRC/python"                        # this tree's package, not an installed one
ln -s "$SRC/examples" "$TMP/examples"
T="timeout -k 5 300"

section() { # the page's fenced blocks of language $1
  python3 - "$SRC/docs/user-code.md" "$1" <<'PY'
import re, sys
part = open(sys.argv[1]).read()
for lang, body in re.findall(r"```(\w*)\n(.*?)```", part, re.S):
    if lang == sys.argv[2]:
        print(body, end="")
PY
}

# 1. the python block, as a script
section python > "$TMP/example.py"
[ -s "$TMP/example.py" ] && ok || bad "no python block in docs/user-code.md"
expect_exit 0 -- $T "$PY" "$TMP/example.py"
expect_grep "WRONG +12/30" "$TMP/out"

# 2. each bash line, with the exit status its comment names
n=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  n=$((n + 1))
  want=$(printf '%s\n' "$line" | sed -nE 's/.*# exit ([0-9]).*/\1/p')
  cmd=$(printf '%s\n' "$line" | sed -E 's/  # .*//; s/^python3 /"$PY" /')
  (cd "$TMP" && PY="$PY" $T bash -c "$cmd") < /dev/null > "$TMP/out" 2>&1
  rc=$?
  [ "$rc" = "${want:-0}" ] && ok || { bad "exit $rc (wanted ${want:-0}): $cmd"; tail -15 "$TMP/out"; }
  case "$cmd" in *compare*)
    expect_grep "^allreduce_sum W=2: fail -> pass$" "$TMP/out"
    expect_grep "^allreduce_sum W=2: per_rank\(x\) rank 0: fail -> pass \(expected 40(\.[0-9]+)?, observed 40\)$" "$TMP/out"
    expect_grep "^0 regressions, 3 fixes, 0 changes$" "$TMP/out" ;;
  esac
done < <(section bash)
[ "$n" -ge 6 ] && ok || bad "found $n commands in docs/user-code.md, wanted 6"
[ -s "$TMP/c10d.json" ] && [ -s "$TMP/sum.xml" ] && ok || bad "the page's commands wrote no reports"

# 3. the numbers in the report: seeds/002's first snippet, 20 and 30 against 40 and 60
python3 - "$TMP/c10d.json" > "$TMP/nums" 2>&1 <<'PY' && ok || { bad "report numbers: $(cat "$TMP/nums")"; }
import json, sys
case = json.load(open(sys.argv[1]))["cases"][0]
got = [(k["rank"], k["observed"][0], round(k["expected"][0], 6), k["status"]) for k in case["checks"]]
assert got == [(0, 20.0, 40.0, "fail"), (1, 30.0, 60.0, "fail")], got
assert "replicated_only" in case["diagnosis"]["matches"], case["diagnosis"]
PY

# 4. bad usage and a missing function exit 2; a hang exits 3 and names the call
M="python -m collgrad_torch check"
expect_exit 2 -- "$PY" -m collgrad_torch check --inputs examples/user_code/seed_allreduce.py:make_inputs
expect_exit 2 -- "$PY" -m collgrad_torch check "$SRC/examples/user_code/seed_allreduce.py:no_such" \
  --inputs "$SRC/examples/user_code/seed_allreduce.py:make_inputs" --world 2 --json "$TMP/missing.json"
expect_grep "has no 'no_such'" "$TMP/out"
expect_exit 3 -- $T "$PY" -m collgrad_torch check "$SRC/python/tests/usercode_bad.py:hangs" \
  --inputs "$SRC/python/tests/usercode_bad.py:make_inputs" --world 2 --timeout 3 --json "$TMP/hang.json" --junit "$TMP/hang.xml"
expect_grep "rank 0: analytic pass .* waits in all_reduce" "$TMP/out"
expect_grep '"error_class": 3' "$TMP/hang.json"
expect_exit 2 -- "$PY" -m collgrad_torch frobnicate
# where the reports and reproductions go is tried before any check runs (each of these ran
# every check first: a report that could not be written was exit 3 at the end, an empty
# name wrote nothing and said nothing, a repeated world ran the check twice)
SA="$SRC/examples/user_code/seed_allreduce.py"
refused() { # refused WHAT ARGS...: exit 2, the line naming WHAT, no rank started
  local what="$1"; shift
  expect_exit 2 -- $T "$PY" -m collgrad_torch check "$SA:sum_nn" --inputs "$SA:make_inputs" --world 2 "$@"
  expect_grep "^$M: $what" "$TMP/out"
  grep -q "W=2" "$TMP/out" && bad "a check ran before refusing $*" || ok
}
refused "--json '': expected a file name$" --json ""
refused "--junit '': expected a file name$" --junit ""
refused "/proc/r.json: cannot write there" --json /proc/r.json
refused "--json .*/same and --junit .*/same would write to the same file" --json "$TMP/same" --junit "$TMP/same"
refused "--json .*: is a directory" --json "$TMP"
refused "--shrink-dir '': expected an existing directory$" --shrink --shrink-dir ""
refused "--shrink-dir '.*/no/such': expected an existing directory$" --shrink --shrink-dir "$TMP/no/such"
refused "/proc/collgrad_repro: cannot write there" --shrink --shrink-dir /proc
expect_exit 2 -- "$PY" -m collgrad_torch check "$SA:sum_nn" --inputs "$SA:make_inputs" --world 2,2
expect_grep "world sizes must be distinct, got '2,2'" "$TMP/out"
for b in -1 nan inf; do
  expect_exit 2 -- "$PY" -m collgrad_torch check "$SA:sum_nn" --inputs "$SA:make_inputs" --shrink-budget "$b"
  expect_grep "argument --shrink-budget: expected a finite number of seconds >= 0, got '$b'" "$TMP/out"
done
finish
