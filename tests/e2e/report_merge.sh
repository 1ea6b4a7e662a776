#!/usr/bin/env bash
# The launcher's merged report keeps every field the ranks wrote. The same jobs
# run twice: under mpiexec directly, where rank 0 writes the report from the
# results it holds, and through the launcher, where each job's result travels
# to it as a JSON line and is merged. The two reports must give the same cases,
# member by member at every depth (tests/tools/report_same; only the durations
# differ). The jobs hold what a merge could lose: a tensor of 300 elements (past
# the 256 values a report carries) whose first difference under torch-nn is at
# element 280, a diagnosis, a hang-hazard warning.
. "$(dirname "$0")/common.bash"
SAME="${CG_REPORT_SAME:-$(dirname "$BIN")/tests/report_same}"
cat > "$TMP/big_prod.case" <<'EOF'
case    big_prod
source  collgrad-check tests: a tensor past the 256 values a report carries
world   2

x = param(ones(300))
a = slice(x, 0, 0, 280)
b = slice(x, 0, 280, 300)
p = all_reduce(b * (rank + 2), prod)
backward(cat(a * (rank + 2), p * (rank + 2), axis=0))
EOF
CASES=("$TMP/big_prod.case" "$SRC/cases/rpc-design/rpc_unused_result.case")

expect_exit 1 -- "$BIN" --rules torch-nn --world 2 --json "$TMP/merged.json" "${CASES[@]}"
# the launcher prints from the merged results: element 280 came through
expect_grep "fail per_rank\(x\) rank 0 rules=torch-nn@1.13: .*first bad index 280: expected 30, observed 12\)$" "$TMP/out"
expect_exit 1 -- mpiexec -n 2 "$BIN" --rules torch-nn --json "$TMP/direct.json" "${CASES[@]}"
if [ -x "$SAME" ]; then
  expect_exit 0 -- "$SAME" "$TMP/merged.json" "$TMP/direct.json" duration_s
else
  bad "no report_same at $SAME (set CG_REPORT_SAME)"
fi
# what the comparison is about is there (so that it cannot pass on two empty reports)
expect_grep '"name":[[:space:]]*"big_prod"' "$TMP/merged.json"
expect_grep '"numel":[[:space:]]*300,' "$TMP/merged.json"
expect_grep '"truncated":[[:space:]]*true' "$TMP/merged.json"
expect_grep '"first_bad_index":[[:space:]]*280,' "$TMP/merged.json"
expect_grep '"first_bad_expected":[[:space:]]*30,' "$TMP/merged.json"
expect_grep '"first_bad_observed":[[:space:]]*12,' "$TMP/merged.json"
expect_grep '"matches":[[:space:]]*\[' "$TMP/merged.json"
expect_grep "rank 0's recv #11 from rank 1 .* is unused" "$TMP/merged.json"
finish
