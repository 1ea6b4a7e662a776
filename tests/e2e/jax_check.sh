#!/usr/bin/env bash
# The JAX check from a shell (issue 54): its page, docs/jax.md, runs as written (its
# python block, then each bash line with the exit status its comment names), with the
# jax interpreter in place of `python`; a right example and a planted bug at W=2 and 4
# exit 1 together, the right one 0 alone; every JSON and JUnit report validates against
# the tool's schemas (validate_reports), and `collgrad-check compare` reads them.
. "$(dirname "$0")/common.bash"
PY="${CG_JAX_PYTHON:-/opt/venv-jax/bin/python}"
if [ ! -x "$PY" ] || ! "$PY" -c "import jax" > /dev/null 2>&1; then
  echo "no jax at $PY (scripts/jax-venv.sh makes it)"
  [ "${CG_REQUIRE_JAX:-0}" = 1 ] && exit 1
  exit 77
fi
export PATH="$(cd "$(dirname "$BIN")" && pwd):$PATH"   # `collgrad-check` is this build
export COLLGRAD_JAX_PYTHON="$PY"                       # and its JAX process this interpreter
export PYTHONPATH="$SRC/python"                        # this tree's package
ln -s "$SRC/examples" "$TMP/examples"
ln -s "$SRC/cases" "$TMP/cases"
T="timeout -k 5 300"

section() { # the page's fenced blocks of language $1
  python3 - "$SRC/docs/jax.md" "$1" <<'PY'
import re, sys
for lang, body in re.findall(r"```(\w*)\n(.*?)```", open(sys.argv[1]).read(), re.S):
    if lang == sys.argv[2]:
        print(body, end="")
PY
}

# 1. the page's python block, as a script
section python > "$TMP/example.py"
[ -s "$TMP/example.py" ] && ok || bad "no python block in docs/jax.md"
expect_exit 0 -- $T "$PY" "$TMP/example.py"
expect_grep "x\[2:4\] +2 .*WRONG" "$TMP/out"
expect_grep "pattern: x 1/W" "$TMP/out"

# 2. each bash line, with the exit status its comment names
n=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  n=$((n + 1))
  want=$(printf '%s\n' "$line" | sed -nE 's/.*# exit ([0-9]).*/\1/p')
  cmd=$(printf '%s\n' "$line" | sed -E 's/  # .*//; s/^python /"$PY" /')
  (cd "$TMP" && PY="$PY" $T bash -c "$cmd") < /dev/null > "$TMP/out" 2>&1
  rc=$?
  [ "$rc" = "${want:-0}" ] && ok || { bad "exit $rc (wanted ${want:-0}): $cmd"; tail -15 "$TMP/out"; }
done < <(section bash)
[ "$n" -ge 8 ] && ok || bad "found $n commands in docs/jax.md, wanted 8"
expect_grep "^\| all_reduce_min_ties \| 2 \| correct \| refused via pmin: NotImplementedError at backward" "$TMP/jax-matrix.md"
[ -s "$TMP/own.json" ] && [ -s "$TMP/tp.xml" ] && ok || bad "the page's commands wrote no reports"

# 3. right and wrong together, and compare over the reports
EX="$SRC/examples/jax/pmean.py"
expect_exit 1 -- $T "$PY" -m collgrad_jax check "$EX:make_loss" "$EX:make_loss_bug" --inputs "$EX:make_inputs" \
  --world 2,4 --json "$TMP/jax.json" --junit "$TMP/jax.xml"
expect_grep "2 of 4 checks passed: wrong gradients" "$TMP/out"
expect_grep "pattern: x W: summed where it should be averaged" "$TMP/out"
expect_exit 0 -- $T "$PY" -m collgrad_jax check "$EX:make_loss" --inputs "$EX:make_inputs" --world 2 \
  --json "$TMP/right.json"
expect_exit 0 -- "$BIN" compare "$TMP/right.json" "$TMP/right.json"
validate_reports
echo "jax_check: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
