#!/usr/bin/env bash
# The matrix of every built-in case (issue 25 item 4's measure): the real-torch
# APIs nn, c10d, gatherlayer, diffdist, rpc and listassign (and funcol under torch 2.x)
# beside the emulation of each, every case at the worlds it declares. Each
# real column's report is compared, case by case and number by number, with
# its emulation's (tests/torch/compare_emulation.py): every disagreement must
# be a finding listed in tests/torch/findings-MAJOR.MINOR-gloo.txt, and every
# listed finding at these worlds must happen. Prints how long the matrix took
# (CI's budget for it is 5 minutes; no timing is asserted here). Exit 77
# (skipped) without torch, and under the sanitizers: tests/e2e/matrix.sh runs
# the same code there, and the torch ranks are not what ASan checks.
. "$(dirname "$0")/common.bash"
if [ -n "${ASAN_OPTIONS:-}" ]; then
  echo "skipped: the sanitizer build runs tests/e2e/matrix.sh; the whole matrix is measured in the plain build"
  exit 77
fi
need_torch_findings
# each API and the emulation of this torch's version window (as torch_suite.sh)
pairs=""
for api in $apis; do pairs="$pairs $api:$(torch_emulation "$api")"; done
backends=""
for p in $pairs; do backends="$backends,${p#*:},pytorch:${p%%:*}"; done  # the matrix names a column once
t0=$(date +%s)
expect_exit 0 -- "$BIN" matrix --backends "${backends#,}" --python "$PY" --timeout 6 --reports "$TMP/col" \
  --md "$TMP/m.md" --html "$TMP/m.html" --json "$TMP/m.json"
echo "the matrix of every built-in case, $(echo "$pairs" | wc -w) APIs and their emulations: $(($(date +%s) - t0)) s"
for p in $pairs; do
  api=${p%%:*}
  report=$(ls "$TMP/col/${p#*:}"*.json 2>/dev/null | head -1)  # torch-nn's is torch-nn@1.13.json
  if "$PY" "$SRC/tests/torch/compare_emulation.py" "$report" "$TMP/col/pytorch:$api.json" "$api" "$findings" \
       > "$TMP/cmp" 2>&1; then ok; else bad "pytorch:$api does not do what ${p#*:} says"; grep -v " same$" "$TMP/cmp"; fi
  echo "pytorch:$api: $(tail -n 1 "$TMP/cmp")"
done
# the table names every column and the seed scenarios' verdicts
expect_grep "^\| allreduce_prod_scaled \| 2 \| " "$TMP/m.md"
python3 - "$TMP/m.json" <<'EOF' && ok || bad "seed 004 (rpc_add) is not correct through pytorch:rpc in the matrix"
import json, sys
m = json.load(open(sys.argv[1]))
rpc = m["columns"].index("pytorch:rpc")
cells = [r["cells"][rpc]["kind"] for r in m["rows"] if r["case"] == "rpc_add"]
assert cells == ["correct", "correct"], cells  # W=2 and W=4
EOF
n=$(grep -c "^| " "$TMP/m.md"); [ "$n" -gt 100 ] && ok || bad "expected over 100 rows, got $n"
finish
