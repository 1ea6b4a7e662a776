#!/usr/bin/env bash
# `collgrad-check compare OLD NEW` on real reports: two backends (reference
# vs torch-nn on the #58005 product case) differ by regressions, a report
# compared with itself by nothing, and what is not a report exits 2.
. "$(dirname "$0")/common.bash"
CASE="$SRC/cases/pytorch-58005/allreduce_prod_scaled.case"
SQUARE="$SRC/cases/pytorch-58005/allreduce_sum_square.case"
expect_exit 0 -- "$BIN" --rules reference --world 2 --json "$TMP/ref.json" "$CASE"
expect_exit 1 -- "$BIN" --rules torch-nn --world 2 --json "$TMP/nn.json" "$CASE"

# reference -> torch-nn: the truth 30 becomes torch-nn's 12 on rank 0, 18 on rank 1
expect_exit 1 -- "$BIN" compare "$TMP/ref.json" "$TMP/nn.json"
expect_grep "^allreduce_prod_scaled W=2 rules=reference -> torch-nn: pass -> fail$" "$TMP/out"
expect_grep "^allreduce_prod_scaled W=2 rules=reference -> torch-nn: per_rank\(x\) rank 0: pass -> fail \(expected 30, observed 12\)$" "$TMP/out"
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
