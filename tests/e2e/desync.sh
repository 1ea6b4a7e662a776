#!/usr/bin/env bash
# Ranks that issue different collectives are reported, not hung: at the call
# under --check-sync, and from the status board when the deadline passes.
. "$(dirname "$0")/common.bash"
PLUGIN="${CG_EXAMPLES_DIR:-$(dirname "$BIN")/examples}/libdesync_rules.so"
CASE="$SRC/cases/collectives/all_gather_ragged.case"
expect_exit 1 -- "$BIN" --world 2 --timeout 10 --check-sync --rules "$PLUGIN" "$CASE"
expect_grep "desync: rank 1 issued all_reduce #1 \(backward, f64, 3 elements, root -1\) while rank 0 issued reduce_scatter #1 \(backward" "$TMP/out"
t0=$(date +%s)
expect_exit 3 -- "$BIN" --world 2 --timeout 3 --rules "$PLUGIN" "$CASE"
t1=$(date +%s)
expect_grep "killed after the 3 s deadline: desync: rank 1 issued all_reduce #1 \(backward\) while rank 0 issued reduce_scatter #1 \(backward\)" "$TMP/out"
[ $((t1 - t0)) -lt 20 ] && ok || bad "desync reported after $((t1 - t0)) s"
# --check-sync costs nothing in correctness: every built-in collective case passes with it
expect_exit 0 -- "$BIN" --world 2 --check-sync "$SRC/cases/collectives"
finish
