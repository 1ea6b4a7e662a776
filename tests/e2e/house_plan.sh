#!/usr/bin/env bash
# scripts/house-plan.sh finds no production file over 400 lines, the run
# layer under 5,000 and no folder with an include circle of more than 3
# modules in the tree (issues 53 and 63), and does find each in a copy of the
# tree that passes them (so the check can fail): a circle of 4 headers, one of
# 4 Python modules, while a circle of 3 passes.
. "$(dirname "$0")/common.bash"
expect_exit 0 -- "$SRC/scripts/house-plan.sh" "$SRC"
expect_grep "^harness/run: [0-9]+ lines$" "$TMP/out"
expect_grep "^0 violations$" "$TMP/out"
mkdir -p "$TMP/tree/harness/run" "$TMP/tree/python/collgrad_torch"
cp "$SRC"/harness/run/*.c "$SRC"/harness/run/*.h "$TMP/tree/harness/run/"
seq 401 | sed 's/^/x = /' > "$TMP/tree/python/collgrad_torch/long.py"
seq 5000 | sed 's|^|// |' | split -l 400 -a 2 - "$TMP/tree/harness/run/filler_" --additional-suffix=.c
for m in a b c d; do echo "#include \"$(echo "$m" | tr abcd bcda).h\"" > "$TMP/tree/harness/run/circle_$m.h"; done
sed -i 's/"\(.\)\.h"/"circle_\1.h"/' "$TMP/tree/harness/run"/circle_*.h
mkdir -p "$TMP/tree/python/collgrad_torch/pkg" "$TMP/tree/python/collgrad_torch/ok"
printf 'from . import m2\n' > "$TMP/tree/python/collgrad_torch/pkg/m1.py"
printf 'from .m3 import f  # a comment\n' > "$TMP/tree/python/collgrad_torch/pkg/m2.py"
printf 'def g():\n    from . import m4 as four\n' > "$TMP/tree/python/collgrad_torch/pkg/m3.py"
printf 'from . import m1, m2\n' > "$TMP/tree/python/collgrad_torch/pkg/m4.py"
printf 'from . import m2\n' > "$TMP/tree/python/collgrad_torch/ok/m1.py"
printf 'from . import m3\n' > "$TMP/tree/python/collgrad_torch/ok/m2.py"
printf 'from . import m1\n' > "$TMP/tree/python/collgrad_torch/ok/m3.py"
expect_exit 1 -- "$SRC/scripts/house-plan.sh" "$TMP/tree"
expect_grep "VIOLATION: harness/run has a circle of 4 modules \(at most 3\): circle_a -> circle_b -> circle_c -> circle_d" "$TMP/out"
expect_grep "VIOLATION: python/collgrad_torch/pkg has a circle of 4 modules \(at most 3\): m1 -> m2 -> m3 -> m4" "$TMP/out"
if grep -q "VIOLATION: python/collgrad_torch/ok" "$TMP/out"; then bad "a circle of 3 modules was called a violation"; else ok; fi
expect_grep "VIOLATION: python/collgrad_torch/long.py has 401 lines \(at most 400\)" "$TMP/out"
expect_grep "VIOLATION: harness/run has [0-9]+ lines \(at most 5000\)" "$TMP/out"
rm -rf "$TMP/tree"
finish
