#!/usr/bin/env bash
# A rank that hangs in a collective and a rank that exits early are both
# reported within the deadline, naming the rank and the collective; exit 3.
. "$(dirname "$0")/common.bash"
CASE="$SRC/cases/pytorch-58005/allreduce_backward_total.case"
t0=$(date +%s)
expect_exit 3 -- "$BIN" --world 2 --timeout 3 --inject hang:1 "$CASE"
t1=$(date +%s)
# the stuck rank is named, apart from the ranks waiting for it (issue 26 item
# 8: on ae24178 every rank read "was waiting in all_reduce #0")
expect_grep "killed after the 3 s deadline: rank 1 stopped before all_reduce #0 \(forward\) of case allreduce_backward_total; rank 0 waits in all_reduce #0 \(forward\) for [0-9.]+ s" "$TMP/out"
# two jobs (reference, c10d), each killed after 3 s plus start-up
[ $((t1 - t0)) -lt 30 ] && ok || bad "hang reported after $((t1 - t0)) s"
expect_exit 3 -- "$BIN" --world 4 --timeout 3 --inject exit:2 "$CASE"
expect_grep "the job ended early .*rank 2 exited early before all_reduce #0 \(forward\)" "$TMP/out"
expect_exit 3 -- "$BIN" --world 4 --timeout 3 --inject hang:1 "$SRC/cases/collectives/all_gather_ragged.case"
expect_grep "rank 1 stopped before all_gather #0 \(forward\) of case all_gather_ragged; ranks 0,2,3 wait in all_gather #0 \(forward\)" "$TMP/out"
# the run goes on after a lost job: the other cases of the world still run
expect_exit 3 -- "$BIN" --world 2 --timeout 3 --inject exit:0:allreduce_sum_scaled "$SRC/cases/pytorch-58005"
expect_grep "allreduce_sum_square \(W=2\) \.+ Passed" "$TMP/out"
expect_grep "allreduce_sum_scaled \(W=2\) \.+ \*\*\*Error" "$TMP/out"
finish
