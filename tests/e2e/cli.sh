#!/usr/bin/env bash
# The CLI contract: help, version, list, usage errors exit 2; getopt_long's
# --opt=value, -R/-E filters, --repeat, --list as the run's exact selection,
# a complete --help and man page, and a report even for a refused selection
# (issue 26 item 3: on ae24178 --world=2, -R, -E and --repeat were rejected,
# --help omitted --inject and the environment, --list on a set with one bad
# file listed nothing, and a refused selection left a stale report).
. "$(dirname "$0")/common.bash"
D58="$SRC/cases/pytorch-58005"
expect_exit 0 -- "$BIN" --help
expect_grep "usage: collgrad-check" "$TMP/out"
expect_exit 0 -- "$BIN" --version
expect_grep "^collgrad-check [0-9]+\.[0-9]+\.[0-9]+$" "$TMP/out"
expect_exit 0 -- "$BIN" --list
expect_grep "allreduce_sum_square +W=1,2,4" "$TMP/out"
expect_exit 2 -- "$BIN" --frobnicate
expect_grep "expected an option \(see --help\), got '--frobnicate'" "$TMP/out"
expect_exit 2 -- "$BIN" -x
expect_grep "expected an option \(see --help\), got '-x'" "$TMP/out"
expect_exit 2 -- "$BIN" --oracle-only=yes
expect_grep "expected no value after an option that takes none, got '--oracle-only=yes'" "$TMP/out"
expect_exit 2 -- "$BIN" --world 0
expect_grep "expected a world size in 1..64 after --world, got '0'" "$TMP/out"
expect_exit 2 -- "$BIN" --world=65
expect_grep "expected a world size in 1..64 after --world, got '65'" "$TMP/out"
expect_exit 2 -- "$BIN" --json
expect_grep "expected a value after --json" "$TMP/out"
expect_exit 2 -- "$BIN" -R
expect_grep "expected a value after -R" "$TMP/out"
expect_exit 2 -- "$BIN" "$TMP/no-such-file.case"
expect_grep "no-such-file.case: cannot read" "$TMP/out"

# --opt=value and options after paths
expect_exit 0 -- "$BIN" --oracle-only "$D58" --world=2 --no-fd --json="$TMP/eq.json"
expect_grep "100% cases passed \(9 of 9\)" "$TMP/out"
[ -s "$TMP/eq.json" ] && ok || bad "--json=FILE wrote nothing"

# -R / -E on case names
expect_exit 0 -- "$BIN" --oracle-only --no-fd -R 'sum_(square|scaled)' -E scaled "$D58"
expect_grep "allreduce_sum_square \(W=4\)" "$TMP/out"
expect_grep "100% cases passed \(3 of 3\)" "$TMP/out"
if grep -q "allreduce_sum_scaled" "$TMP/out"; then bad "-E did not exclude allreduce_sum_scaled"; else ok; fi
expect_exit 2 -- "$BIN" --oracle-only -R nomatch "$D58"
expect_grep "^collgrad-check: -R 'nomatch' matches no case; the 9 cases are: allreduce_backward_total, " "$TMP/out"
expect_exit 2 -- "$BIN" --oracle-only -R '(' "$D58"
expect_grep "expected a POSIX extended regular expression after -R, got '\('" "$TMP/out"

# --repeat N: until-fail
expect_exit 0 -- "$BIN" --oracle-only --no-fd --repeat 3 "$D58/allreduce_sum_square.case"
expect_grep "^round 3 of 3: passed$" "$TMP/out"
sed 's/^expect grad(x) per_rank         \[40\] \[60\]/expect grad(x) per_rank         [41] [60]/; s/^case .*/case wrong_forty/' \
  "$D58/allreduce_sum_square.case" > "$TMP/wrong.case"
expect_exit 1 -- "$BIN" --oracle-only --no-fd --repeat 5 --json "$TMP/rep.json" "$TMP/wrong.case"
expect_grep "^round 1 of 5: did not pass, stopping$" "$TMP/out"
if grep -q "round 2" "$TMP/out"; then bad "--repeat went on after a failing round"; else ok; fi
expect_exit 2 -- "$BIN" --repeat 0
expect_grep "expected a count in 1..1000000 after --repeat, got '0'" "$TMP/out"

# --list is the run's selection: the good case's jobs and the bad file, exit 2 like the run
mkdir -p "$TMP/sel"
cp "$D58/allreduce_sum_square.case" "$SRC/tests/malformed/unknown_op.case" "$TMP/sel/"
expect_exit 2 -- "$BIN" --list "$TMP/sel"
expect_grep "^allreduce_sum_square +W=1,2,4 " "$TMP/out"
expect_grep "unknown_op.case +ERROR .*expected a known function, got 'al_reduce'" "$TMP/out"
# W=1,2,4 under reference; W=2 also under c10d and torch-nn (its rules=
# expectations list two ranks' values, so they apply at W=2 only)
expect_grep "^1 cases, 5 jobs, 1 errors$" "$TMP/out"
expect_exit 2 -- "$BIN" --no-fd --json "$TMP/sel.json" "$TMP/sel"
expect_grep "\(5 of 6\); 0 failed, 1 errors" "$TMP/out"
expect_grep "^5 passed, 0 failed, 1 errors, 0 skipped$" "$TMP/out"   # errors are not failures
expect_exit 2 -- "$BIN" --list --oracle-only "$TMP/sel"
expect_grep "^1 cases, 3 jobs, 1 errors$" "$TMP/out"

# a selection refused before the run still writes the report asked for
echo '{"stale": true}' > "$TMP/stale.json"
expect_exit 2 -- "$BIN" --world 3 --json "$TMP/stale.json" --junit "$TMP/stale.xml" "$TMP/sel"
python3 - "$TMP/stale.json" > "$TMP/py.out" 2>&1 <<'PY' && ok || bad "refused selection report: $(cat "$TMP/py.out")"
import json, sys
r = json.load(open(sys.argv[1]))
got = [(c["name"], c["status"]) for c in r["cases"]]
assert got == [("unknown_op", "error"), ("refused", "error")], got
assert "no case runs at world size 3" in r["cases"][1]["message"], r["cases"][1]
PY
expect_grep "no case runs at world size 3" "$TMP/stale.xml"
expect_exit 2 -- "$BIN" --json "$TMP/missing.json" "$TMP/no-such-dir"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cases"]; assert c[-1]["name"]=="refused" and "cannot read" in c[-1]["message"], c' \
  "$TMP/missing.json" && ok || bad "a missing path left no report"

# --help: every option and environment variable, and the cases directory searched
expect_exit 0 -- env COLLGRAD_CASES_DIR="$TMP/sel" "$BIN" --help
for opt in --oracle-only --world -R --include -E --exclude --repeat --rules --transport --device --backend \
           --torch-backend --python --timeout --check-sync --no-fd --inject --max-case-bytes --max-elements \
           --max-case-elements --json --junit --list --explain --verbose --help --version \
           COLLGRAD_CASES_DIR CG_MPIEXEC TMPDIR COLLGRAD_PYTHON COLLGRAD_KINDS; do
  grep -qe "$opt" "$TMP/out" && ok || bad "--help does not mention $opt"
done
expect_grep "^  $TMP/sel$" "$TMP/out"
# the man page documents the same options, and renders
MAN="$SRC/harness/tool/collgrad-check.1"
for opt in $(grep -oE -- '--[a-z][a-z-]+' "$TMP/out" | sort -u); do
  grep -qF -- "$(printf '%s' "$opt" | sed 's/-/\\-/g')" "$MAN" && ok || bad "collgrad-check.1 does not document $opt"
done
# export-ir --output: tried before any case is read, written as the reports are
expect_exit 2 -- "$BIN" export-ir --output "" "$D58"
expect_grep "^collgrad-check export-ir: --output '': expected a file name \(or - for standard output\)$" "$TMP/out"
expect_exit 2 -- "$BIN" export-ir --output /proc/ir.json "$D58"
expect_grep "^collgrad-check export-ir: /proc/ir.json: cannot create a temporary file beside it" "$TMP/out"
expect_exit 0 -- "$BIN" export-ir --output "$TMP/ir.json" "$D58"
expect_grep '"cases":' "$TMP/ir.json"
expect_exit 0 -- "$BIN" export-ir --output - "$D58"
expect_grep '"cases":' "$TMP/out"
if command -v man > /dev/null; then
  MANWIDTH=80 man -l "$MAN" > "$TMP/man.txt" 2> "$TMP/man.err" && ok || bad "man -l failed: $(cat "$TMP/man.err")"
  expect_grep "EXIT STATUS" "$TMP/man.txt"
fi
finish
