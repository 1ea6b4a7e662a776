#!/usr/bin/env bash
# Ranks that issue different collectives are reported, not hung: at the call
# under --check-sync, and from the status board when the deadline passes.
. "$(dirname "$0")/common.bash"
PLUGIN="${CG_EXAMPLES_DIR:-$(dirname "$BIN")/examples}/libdesync_rules.so"
CASE="$SRC/cases/collectives/all_gather_ragged.case"
expect_exit 1 -- "$BIN" --world 2 --timeout 10 --check-sync --rules "$PLUGIN" "$CASE"
expect_grep "desync: rank 1 issued all_reduce #1 \(backward, f64, 3 elements, root -1, program call 0\) while rank 0 issued reduce_scatter #1 \(backward" "$TMP/out"
t0=$(date +%s)
expect_exit 3 -- "$BIN" --world 2 --timeout 3 --rules "$PLUGIN" "$CASE"
t1=$(date +%s)
expect_grep "killed after the 3 s deadline: desync: rank 1 issued all_reduce #1 \(backward\) while rank 0 issued reduce_scatter #1 \(backward\)" "$TMP/out"
[ $((t1 - t0)) -lt 20 ] && ok || bad "desync reported after $((t1 - t0)) s"
# a rank that skips a collective (issue 26 item 8): its next call matches rank
# 0's in entry, dtype, count and root; only the program call differs. On
# ae24178 --check-sync let the two pair up and the run ended at the deadline.
SKIP="${CG_EXAMPLES_DIR:-$(dirname "$BIN")/examples}/libskip_rules.so"
printf 'case two_all_reduces\nworlds 2\nx = param(ones(3))\na = all_reduce(x, sum)\nb = all_reduce(a, sum)\nbackward(sum(b))\n' \
  > "$TMP/two.case"
t0=$(date +%s)
expect_exit 1 -- "$BIN" --timeout 20 --check-sync --rules "$SKIP" "$TMP/two.case"
t1=$(date +%s)
expect_grep "desync: rank 1 issued all_reduce #2 \(backward, f64, 3 elements, root -1, program call 0\) while rank 0 issued all_reduce #2 \(backward, f64, 3 elements, root -1, program call 1\)" "$TMP/out"
[ $((t1 - t0)) -lt 15 ] && ok || bad "the skipped collective was reported after $((t1 - t0)) s (the deadline is 20 s)"
# issue 39 item 3: the skipped collective is the skipping rank's last one (program call 0 of a case
# with one all_reduce): rank 1 finishes its program while rank 0 waits in the call. It ended at the
# deadline ("rank 1 stopped outside any communication call") and was diagnosed as a wrong gradient;
# the end of each rank's program is compared too
t0=$(date +%s)
SKIP_RULES_CALL=0 expect_exit 1 -- "$BIN" --world 2 --timeout 20 --check-sync --rules "$SKIP" \
  "$SRC/cases/collectives/all_reduce_sum.case"
t1=$(date +%s)
expect_grep "desync: rank 1 ended its program while rank 0 issued all_reduce #1 \(backward, f64, 3 elements, root -1, program call 0\)" "$TMP/out"
grep -q "matches no known mistake" "$TMP/out" && bad "a desync diagnosed as a wrong gradient" || ok
[ $((t1 - t0)) -lt 15 ] && ok || bad "the desync at the end was reported after $((t1 - t0)) s (the deadline is 20 s)"
# issue 52 item 5: the same inside a group of 2 of W=3. The skipping member (group rank 1,
# world rank 2) ended its program while group rank 0 waited in the group's check, which the
# world's end check never reached (the run ended at the deadline, "rank 1 waits in all_reduce
# #1"); every rank now posts its end on each of its groups too
printf 'case group_skip\nworlds 3\ng = group([1, 2])\nx = param(ones(3))\ny = all_reduce(x, sum, group=g)\nbackward(sum(y) * (rank + 1))\n' \
  > "$TMP/group_skip.case"
t0=$(date +%s)
SKIP_RULES_CALL=0 expect_exit 1 -- "$BIN" --timeout 20 --check-sync --rules "$SKIP" "$TMP/group_skip.case"
t1=$(date +%s)
for r in 1 2; do
  expect_grep "fail error\(\) rank $r .*desync: group rank 1 ended its program while group rank 0 issued all_reduce #1 \(backward, f64, 3 elements, root -1, program call 0\)" "$TMP/out"
done
[ $((t1 - t0)) -lt 15 ] && ok || bad "the desync in the group was reported after $((t1 - t0)) s (the deadline is 20 s)"
# --check-sync costs nothing in correctness: every built-in collective case passes with it
expect_exit 0 -- "$BIN" --world 2 --check-sync "$SRC/cases/collectives"
expect_exit 0 -- "$BIN" --check-sync "$SRC/cases/subgroups"   # groups' ends meet too, at W = 3 and 4
finish
