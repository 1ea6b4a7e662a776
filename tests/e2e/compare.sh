#!/usr/bin/env bash
# `collgrad-check compare OLD NEW` on real reports: two backends (reference
# vs torch-nn on the #58005 product case) differ by regressions, a report
# compared with itself by nothing; on hand-written ones: checks and cases NEW
# stopped checking (gone, error, skipped) are regressions; and what is not a
# report exits 2.
. "$(dirname "$0")/common.bash"
CASE="$SRC/cases/pytorch-58005/allreduce_prod_scaled.case"
SQUARE="$SRC/cases/pytorch-58005/allreduce_sum_square.case"
expect_exit 0 -- "$BIN" --rules reference --world 2 --json "$TMP/ref.json" "$CASE"
expect_exit 1 -- "$BIN" --rules torch-nn --world 2 --json "$TMP/nn.json" "$CASE"

# reference -> torch-nn@1.13: the truth 30 becomes torch-nn's 12 on rank 0, 18 on rank 1
expect_exit 1 -- "$BIN" compare "$TMP/ref.json" "$TMP/nn.json"
expect_grep "^allreduce_prod_scaled W=2 rules=reference -> torch-nn@1.13: pass -> fail$" "$TMP/out"
expect_grep "^allreduce_prod_scaled W=2 rules=reference -> torch-nn@1.13: per_rank\(x\) rank 0: pass -> fail \(expected 30, observed 12\)$" "$TMP/out"
expect_grep "per_rank\(x\) rank 1: pass -> fail \(expected 30, observed 18\)$" "$TMP/out"
expect_grep "^5 regressions, 0 fixes, [0-9]+ changes$" "$TMP/out"
# the other way round: fixes only, exit 0
expect_exit 0 -- "$BIN" compare "$TMP/nn.json" "$TMP/ref.json"
expect_grep "per_rank\(x\) rank 0: fail -> pass \(expected 30, observed 30\)$" "$TMP/out"
expect_grep "^0 regressions, 5 fixes, [0-9]+ changes$" "$TMP/out"

# identical reports: nothing to say
expect_exit 0 -- "$BIN" compare "$TMP/ref.json" "$TMP/ref.json"
expect_grep "^0 regressions, 0 fixes, 0 changes$" "$TMP/out"

# an observed value that moved while still passing (the finite difference)
sed -E 's/\[30\.0000000[0-9]*\]/[30.5]/' "$TMP/ref.json" > "$TMP/moved.json"
expect_exit 0 -- "$BIN" compare "$TMP/ref.json" "$TMP/moved.json"
expect_grep "finite_difference\(x\) rank 0: value changed \(observed 30 -> 30\.5\)$" "$TMP/out"
expect_grep "^0 regressions, 0 fixes, 2 changes$" "$TMP/out"

# a case that passed in OLD and is gone from NEW is a regression
expect_exit 0 -- "$BIN" --rules reference --world 2 --json "$TMP/two.json" "$CASE" "$SQUARE"
expect_exit 1 -- "$BIN" compare "$TMP/two.json" "$TMP/ref.json"
expect_grep "^allreduce_sum_square W=2 rules=reference: only in OLD \(pass\)$" "$TMP/out"
expect_grep "^1 regressions, 0 fixes, 0 changes$" "$TMP/out"
expect_exit 0 -- "$BIN" compare "$TMP/ref.json" "$TMP/two.json"
expect_grep "^allreduce_sum_square W=2 rules=reference: only in NEW \(pass\)$" "$TMP/out"

# Hand-written reports (valid against the schema: finish() checks them too) for
# what NEW stops checking. chk TENSOR RANK STATUS: a check; kase NAME STATUS
# CHECK...: a case at W=2 under reference; report FILE CASE...: the report.
chk() {
  local v
  case "$3" in
    pass) v='"numel": 1, "expected": [30], "observed": [30], "max_abs_err": 0, "max_rel_err": 0, "max_ulp": 0, "first_bad_index": -1' ;;
    fail) v='"numel": 1, "expected": [30], "observed": [12], "max_abs_err": 18, "max_rel_err": 0.6, "max_ulp": 1e16, "first_bad_index": 0, "first_bad_expected": 30, "first_bad_observed": 12' ;;
    *) v='"numel": 0, "expected": [], "observed": [], "max_abs_err": 0, "max_rel_err": 0, "max_ulp": 0, "first_bad_index": -1, "note": "why"' ;;
  esac
  printf '{"tensor": "%s", "rank": %s, "semantics": "per_rank", "rules": "reference", "against": "oracle", %s, "status": "%s"}' "$1" "$2" "$v" "$3"
}
kase() {
  local name="$1" st="$2" extra=""; shift 2
  [ "$st" = error ] && extra='"message": "rank 1 died", "error_class": 3, '
  [ "$st" = skip ] && extra='"message": "not run: interrupted by signal 15", '
  local IFS=,
  printf '{"name": "%s", "file": null, "source": null, "world": 2, "rules": "reference", "status": "%s", "duration_s": 0.5, %s"replicated": {"defined": true, "reason": null}, "finite_difference": {"status": "skip", "max_rel_err": 0, "tolerance": 1e-6, "reason": "--no-fd"}, "checks": [%s]}' "$name" "$st" "$extra" "$*"
}
report() {
  local f="$1" c n_pass=0 n_fail=0 n_err=0 n_skip=0; shift
  for c in "$@"; do
    case "$c" in
      *'"status": "pass", "duration_s"'*) n_pass=$((n_pass + 1)) ;; *'"status": "fail", "duration_s"'*) n_fail=$((n_fail + 1)) ;;
      *'"status": "error", "duration_s"'*) n_err=$((n_err + 1)) ;; *) n_skip=$((n_skip + 1)) ;;
    esac
  done
  local IFS=,
  printf '{"schema": "collgrad-check/report/1", "tool": {"name": "collgrad-check", "version": "0.1.0"}, "host": "h", "written": "2025-01-01T00:00:00Z", "mode": "distributed", "transport": "mpi", "rules": "reference", "device": "cpu", "cases": [%s], "summary": {"passed": %d, "failed": %d, "errors": %d, "skipped": %d}}\n' "$*" "$n_pass" "$n_fail" "$n_err" "$n_skip" > "$f"
}
report "$TMP/old.json" \
  "$(kase c1 pass "$(chk x 0 pass)" "$(chk x 1 pass)" "$(chk y 0 pass)" "$(chk z 0 fail)" "$(chk w 0 skip)")" \
  "$(kase gone_fail fail "$(chk x 0 fail)")" "$(kase gone_skip skip)" \
  "$(kase stays pass "$(chk x 0 pass)")" "$(kase later pass "$(chk x 0 pass)")"
report "$TMP/new.json" \
  "$(kase c1 fail "$(chk x 0 pass)" "$(chk x 1 error)" "$(chk y 0 skip)" "$(chk z 0 error)")" \
  "$(kase stays pass "$(chk x 0 pass)" "$(chk n 0 pass)")" "$(kase later skip)"

# a check that disappeared, and nothing else: a regression (exit 1)
report "$TMP/less.json" "$(kase stays pass)"
report "$TMP/more.json" "$(kase stays pass "$(chk x 0 pass)")"
expect_exit 1 -- "$BIN" compare "$TMP/more.json" "$TMP/less.json"
expect_grep "^stays W=2 rules=reference: per_rank\(x\) rank 0: only in OLD \(pass\)$" "$TMP/out"
expect_grep "^1 regressions, 0 fixes, 0 changes$" "$TMP/out"
# a case that failed in OLD and vanished: a regression too (its failure is hidden)
report "$TMP/failing.json" "$(kase stays pass)" "$(kase gone_fail fail "$(chk x 0 fail)")"
expect_exit 1 -- "$BIN" compare "$TMP/failing.json" "$TMP/less.json"
expect_grep "^gone_fail W=2 rules=reference: only in OLD \(fail\)$" "$TMP/out"
expect_grep "^1 regressions, 0 fixes, 0 changes$" "$TMP/out"

# everything at once; each line and the count worked out by hand from compare.h
expect_exit 1 -- "$BIN" compare "$TMP/old.json" "$TMP/new.json"
expect_grep "^c1 W=2 rules=reference: pass -> fail$" "$TMP/out"                                 # regression 1
expect_grep "^c1 W=2 rules=reference: per_rank\(x\) rank 1: pass -> error \(why\)$" "$TMP/out"  # 2
expect_grep "^c1 W=2 rules=reference: per_rank\(y\) rank 0: pass -> skip \(why\)$" "$TMP/out"   # 3
expect_grep "^c1 W=2 rules=reference: per_rank\(z\) rank 0: fail -> error \(why\)$" "$TMP/out"  # 4
expect_grep "^c1 W=2 rules=reference: per_rank\(w\) rank 0: only in OLD \(skip\)$" "$TMP/out"  # change 1
expect_grep "^gone_fail W=2 rules=reference: only in OLD \(fail\)$" "$TMP/out"                  # regression 5
expect_grep "^gone_skip W=2 rules=reference: only in OLD \(skip\)$" "$TMP/out"                  # change 2
expect_grep "^stays W=2 rules=reference: per_rank\(n\) rank 0: only in NEW \(pass\)$" "$TMP/out" # change 3
expect_grep "^later W=2 rules=reference: pass -> skip \(not run: interrupted by signal 15\)$" "$TMP/out" # 6
expect_grep "^later W=2 rules=reference: per_rank\(x\) rank 0: only in OLD \(pass\)$" "$TMP/out" # 7
expect_grep "^7 regressions, 0 fixes, 3 changes$" "$TMP/out"
# the other way round: c1 and x1 are fixes; n vanished (a regression); the rest changes
expect_exit 1 -- "$BIN" compare "$TMP/new.json" "$TMP/old.json"
expect_grep "^stays W=2 rules=reference: per_rank\(n\) rank 0: only in OLD \(pass\)$" "$TMP/out"
expect_grep "^1 regressions, 2 fixes, 7 changes$" "$TMP/out"

# numbers no report of the tool holds, written by hand or by another tool: a
# rank or a first bad index of 1e308 (converting it to an int was undefined
# behaviour, "rank -2147483648" here and a sanitizer's abort under CI) is no
# rank and no index; a world that is no whole number >= 0 is no report (0: a
# case refused before any world, as in a refused selection's report)
report "$TMP/huge_old.json" "$(kase stays pass "$(chk x 1e308 pass)")"
report "$TMP/huge_new.json" "$(kase stays fail "$(chk x 1e308 fail | sed 's/"first_bad_index": 0/"first_bad_index": 1e308/')")"
expect_exit 1 -- "$BIN" compare "$TMP/huge_old.json" "$TMP/huge_new.json"
expect_grep "^stays W=2 rules=reference: per_rank\(x\): pass -> fail \(expected 30, observed 12\)$" "$TMP/out"
expect_grep "^2 regressions, 0 fixes, 0 changes$" "$TMP/out"
SCHEMA_EXEMPT+=("$TMP/world.hand")
for w in 2.5 -1 1e308 '"2"'; do
  sed "s/\"world\": 2,/\"world\": $w,/" "$TMP/huge_old.json" > "$TMP/world.hand"
  expect_exit 2 -- "$BIN" compare "$TMP/world.hand" "$TMP/huge_old.json"
  expect_grep "world.hand: not a collgrad-check report" "$TMP/out"
done
sed 's/"world": 2,/"world": 0,/' "$TMP/huge_old.json" > "$TMP/world0.json"
expect_exit 0 -- "$BIN" compare "$TMP/world0.json" "$TMP/world0.json"
expect_grep "^0 regressions, 0 fixes, 0 changes$" "$TMP/out"

# not reports: exit 2 with the file named
echo "this is not json" > "$TMP/garbage.json"
expect_exit 2 -- "$BIN" compare "$TMP/ref.json" "$TMP/garbage.json"
expect_grep "garbage.json: not a collgrad-check report" "$TMP/out"
echo '{"schema": "something/else", "cases": []}' > "$TMP/other.json"
expect_exit 2 -- "$BIN" compare "$TMP/other.json" "$TMP/ref.json"
expect_grep "other.json: not a collgrad-check report" "$TMP/out"
expect_exit 2 -- "$BIN" compare "$TMP/ref.json" "$TMP/no-such.json"
expect_grep "no-such.json: cannot read: No such file or directory" "$TMP/out"
expect_exit 2 -- "$BIN" compare "$TMP/ref.json"
expect_grep "usage: collgrad-check compare OLD.json NEW.json" "$TMP/out"
finish
