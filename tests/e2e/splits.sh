#!/usr/bin/env bash
# all_to_all with explicit split sizes (send_splits, recv_splits): the two
# built-in cases pass in the oracle and distributed, and every malformed split
# list is refused at its argument's file:line:col with exit 2, in the oracle
# and before or by the ranks, never a crash or a hang.
. "$(dirname "$0")/common.bash"
cases=("$SRC/cases/collectives/all_to_all_splits.case" "$SRC/cases/collectives/all_to_all_moe.case")
expect_exit 0 -- "$BIN" --oracle-only "${cases[@]}"
expect_grep "^2 passed, 0 failed" "$TMP/out"
expect_exit 0 -- "$BIN" "${cases[@]}"
expect_grep "^2 passed, 0 failed" "$TMP/out"

# bad NAME LINE:COL MESSAGE BODY: a W=2 case whose x has 3 rows on rank 0
# and 1 on rank 1; BODY is its all_to_all line.
bad_case() {
    local name=$1 at=$2 msg=$3 body=$4
    printf 'case %s\nworld 2\nx = param(arange(rank == 0 ? 3 : 1))\n%s\nbackward(sum(y))\n' \
        "$name" "$body" > "$TMP/$name.case"
    for mode in --oracle-only ""; do
        expect_exit 2 -- "$BIN" $mode "$TMP/$name.case"
        expect_grep "$name.case:$at: $msg" "$TMP/out"
    done
}
bad_case length 4:19 "expected send_splits as a list of 2 row counts \(one per rank\), got a list of another length" \
    'y = all_to_all(x, [3])'
bad_case number 4:19 "expected send_splits as a list of 2 row counts \(one per rank\), got a number" \
    'y = all_to_all(x, 3)'
bad_case negative 4:19 "expected whole row counts >= 0 in send_splits, got -1 at index 1" \
    'y = all_to_all(x, rank == 0 ? [4, -1] : [1, 0])'
bad_case fraction 4:19 "expected whole row counts >= 0 in send_splits, got 0.5 at index 0" \
    'y = all_to_all(x, rank == 0 ? [0.5, 2.5] : [1, 0])'
bad_case sum 4:19 "expected send_splits to add up to the input's 3 rows, got \[1, 1\] \(2\) \(rank 0, world 2\)" \
    'y = all_to_all(x, rank == 0 ? [1, 1] : [1, 0])'
bad_case recv 4:48 "expected recv_splits \[1, 1\] \(what the ranks' send_splits send rank 0\), got \[2, 0\]" \
    'y = all_to_all(x, rank == 0 ? [1, 2] : [1, 0], rank == 0 ? [2, 0] : [2, 0])'
bad_case keyword 4:72 "expected recv_splits \\[1, 1\\] \\(what the ranks' send_splits send rank 0\\), got \\[0, 0\\]" \
    'y = all_to_all(x, send_splits=rank == 0 ? [1, 2] : [1, 0], recv_splits=[0, 0])'
# chunk/split: equal pieces only (torch would make a short last piece)
printf 'case uneven\nworld 2\nx = param(arange(5))\nc = chunk(x, world)\nbackward(sum(c))\n' > "$TMP/uneven.case"
expect_exit 2 -- "$BIN" --oracle-only "$TMP/uneven.case"
expect_grep "uneven.case:4:14: expected a number of chunks that cuts the first axis \(5 rows\) into equal pieces, got 2" "$TMP/out"
# reduce_scatter: every rank cuts its input the same way (here 2 rows each)
printf 'case rs_agree\nworld 2\nx = param(ones(2))\ny = reduce_scatter(x, sum, rank == 0 ? [2, 0] : [1, 1])\nbackward(sum(y))\n' \
    > "$TMP/rs_agree.case"
for mode in --oracle-only ""; do
    expect_exit 2 -- "$BIN" $mode "$TMP/rs_agree.case"
    expect_grep "rs_agree.case:4:28: expected the same send_splits on every rank of a reduce_scatter, got \[1, 1\] here and \[2, 0\] on rank 0 \(rank 1, world 2\)" "$TMP/out"
done
finish
