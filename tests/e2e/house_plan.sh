#!/usr/bin/env bash
# scripts/house-plan.sh finds no production file over 400 lines and the run
# layer under 5,000 in the tree (issue 53), and does find both in a copy of the
# tree that passes them (so the check can fail).
. "$(dirname "$0")/common.bash"
expect_exit 0 -- "$SRC/scripts/house-plan.sh" "$SRC"
expect_grep "^harness/run: [0-9]+ lines$" "$TMP/out"
expect_grep "^0 violations$" "$TMP/out"
mkdir -p "$TMP/tree/harness/run" "$TMP/tree/python/collgrad_torch"
cp "$SRC"/harness/run/*.c "$SRC"/harness/run/*.h "$TMP/tree/harness/run/"
seq 401 | sed 's/^/x = /' > "$TMP/tree/python/collgrad_torch/long.py"
seq 5000 | sed 's|^|// |' | split -l 400 -a 2 - "$TMP/tree/harness/run/filler_" --additional-suffix=.c
expect_exit 1 -- "$SRC/scripts/house-plan.sh" "$TMP/tree"
expect_grep "VIOLATION: python/collgrad_torch/long.py has 401 lines \(at most 400\)" "$TMP/out"
expect_grep "VIOLATION: harness/run has [0-9]+ lines \(at most 5000\)" "$TMP/out"
rm -rf "$TMP/tree"
finish
