#!/usr/bin/env bash
# --transport nccl where no GPU can be used: the launcher refuses once, before
# any mpiexec, with exit 3 and the reason ("no CUDA device is visible", or a
# build without CUDA/NCCL), and no job runs. Where a GPU IS visible there is
# nothing to check here (scripts/gpu-check.sh runs nccl for real): exit 77,
# which ctest reports as skipped.
. "$(dirname "$0")/common.bash"
COLL="$SRC/cases/collectives"

if [ -e /dev/nvidia0 ] || { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null |
                             grep -q '^GPU '; }; then
  echo "SKIP: a GPU is visible (/dev/nvidia0 or nvidia-smi -L); this test needs none"
  exit 77
fi

expect_exit 3 -- "$BIN" --transport nccl "$COLL/all_reduce_sum.case"
if grep -q "built without CUDA/NCCL" "$TMP/out"; then
  expect_grep "^collgrad-check: nccl: this collgrad-check was built without CUDA/NCCL$" "$TMP/out"
else
  expect_grep "^collgrad-check: nccl: no CUDA device is visible \(cudaGetDeviceCount: .+\)$" \
    "$TMP/out"
fi
# said once, and nothing launched
if [ "$(grep -c "nccl: " "$TMP/out")" -eq 1 ]; then ok; else bad "the refusal must appear once"; fi
if grep -q "Passed\|Failed\|Error " "$TMP/out"; then bad "no job should run"; else ok; fi
# the run never started: the JSON report says it was refused, and why
expect_exit 3 -- "$BIN" --transport nccl --json "$TMP/r.json" "$COLL/all_reduce_sum.case"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cases"]; assert [(k["name"], k["status"], k["error_class"]) for k in c]==[("refused","error",3)] and "nccl" in c[0]["message"], c' \
  "$TMP/r.json" && ok || bad "the refusal is not in the report"
# bench alike: once, exit 3 (the machine's, as above), no rank started (each once said it and bench exited 2)
expect_exit 3 -- "$BIN" bench -t nccl -c all_reduce -b 1K -e 1K
if [ "$(grep -c "nccl: " "$TMP/out")" -eq 1 ]; then ok; else bad "bench's refusal must appear once"; fi
expect_grep "^collgrad-check bench: nccl: " "$TMP/out"
# the oracle needs no transport: --oracle-only still runs
expect_exit 0 -- "$BIN" --transport nccl --oracle-only "$COLL/all_reduce_sum.case"
finish
