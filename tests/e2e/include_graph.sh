#!/usr/bin/env bash
# scripts/include-graph.sh finds no include that runs up the layers and no
# cycle between layer folders in the tree (issue 23), and does find one in a
# copy of the tree where the IR includes a tensor, and a file outside every
# layer folder (so the check can fail).
. "$(dirname "$0")/common.bash"
expect_exit 0 -- "$SRC/scripts/include-graph.sh" "$SRC"
expect_grep "^[0-9]+ edges between layers, 0 violations$" "$TMP/out"
mkdir "$TMP/tree"
cp -r "$SRC/harness" "$SRC/oracles" "$SRC/reports" "$TMP/tree/"
sed -i 's|#include "dtype.h"|#include "dtype.h"\n#include "tensor.h"|' "$TMP/tree/harness/lang/ir.h"
expect_exit 1 -- "$SRC/scripts/include-graph.sh" "$TMP/tree"
expect_grep "VIOLATION: harness/lang/ir.h includes harness/autograd/tensor.h: harness/lang -> harness/autograd runs up the layers" "$TMP/out"
expect_grep "VIOLATION: cycle: harness/autograd <-> harness/lang" "$TMP/out"
# a source file dropped beside the layer folders belongs to none
echo 'int cg_stray;' > "$TMP/tree/harness/stray.c"
expect_exit 1 -- "$SRC/scripts/include-graph.sh" "$TMP/tree"
expect_grep "VIOLATION: harness/stray.c is in no layer folder" "$TMP/out"
rm -rf "$TMP/tree" # sources, not reports: keep them out of validate_reports
finish
