#!/usr/bin/env bash
# One command for a machine with a GPU: install what the build needs, build
# with the GPU path into ./build-gpu (or $CG_BUILD_DIR), check every CUDA kernel
# against its CPU op (cudatest_ops), every op and autograd on a CUDA graph against
# a host graph (cudatest_graph), the rule sets' local math (cudatest_local) and
# every nccl transport entry (cudatest_nccl at W = 1, 2), then run every built-in
# case over `--transport nccl` (tensors on the GPU: --device cuda is implied) at
# W = 1, 2 and 4, each writing out/gpu-report-w<W>.json,
# and print the summary lines. When a world has more ranks than there are GPUs,
# the ranks share them (COLLGRAD_NCCL_SHARE_GPU=1, see README). Extra arguments
# go to collgrad-check (e.g. --verbose, --timeout 120).
# Exit status: 0 all passed, 1 a check failed, 3 no GPU path, no GPU, or a run
# that could not start.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${CG_BUILD_DIR:-$root/build-gpu}"
out="$root/out"

"$root/scripts/setup.sh" || exit 3
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${CG_BUILD_TYPE:-RelWithDebInfo}" >/dev/null &&
  cmake --build "$build" -j "$(nproc)" || exit 3
if [ ! -x "$build/tests/cudatest_ops" ]; then
  echo "gpu-check: this build has no GPU path (CUDA toolkit, NCCL or a working nvcc not found)"
  exit 3
fi
mkdir -p "$out"
summary=()
status=0

# worse status wins: 3 (could not run) over 1 (a check failed) over 0
note() { [ "$1" -ne 0 ] && { [ "$1" -eq 3 ] || [ "$status" -eq 0 ]; } && status=$1; }

echo "== cudatest_ops: the CUDA kernels against the CPU ops"
"$build/tests/cudatest_ops" > "$out/gpu-cudatest.log" 2>&1
rc=$?
grep -E "^(FAIL|SKIP)" "$out/gpu-cudatest.log"
if [ "$rc" -eq 77 ]; then
  echo "gpu-check: no usable GPU, nothing to check"
  exit 3
fi
summary+=("$(tail -n 1 "$out/gpu-cudatest.log")")
note $((rc == 0 ? 0 : 1))

for t in cudatest_graph cudatest_local; do
  echo "== $t: the same programs on a CUDA graph and a host graph"
  "$build/tests/$t" > "$out/gpu-$t.log" 2>&1
  rc=$?
  grep -E "^FAIL" "$out/gpu-$t.log" | head -20
  summary+=("$(tail -n 1 "$out/gpu-$t.log")")
  note $((rc == 0 ? 0 : 1))
done

nvidia-smi -L 2>/dev/null | sed 's/^/device: /'
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "${gpus:-0}" -ge 1 ] || gpus=1
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
for w in 1 2; do
  share=0
  [ "$w" -gt "$gpus" ] && share=1
  log="$out/gpu-nccl-transport-w$w.log"
  echo "== cudatest_nccl: every transport entry, host and device buffers, W=$w"
  COLLGRAD_NCCL_SHARE_GPU=$share "${mpiexec:-mpiexec}" -n "$w" "$build/tests/cudatest_nccl" \
    > "$log" 2>&1
  rc=$?
  grep -E "^rank [0-9]+ " "$log" | head -20
  summary+=("$(grep -E '^cudatest_nccl' "$log" || echo "cudatest_nccl W=$w: exit $rc, see $log")")
  note $((rc == 0 ? 0 : 1))
done
for w in 1 2 4; do
  share=0
  [ "$w" -gt "$gpus" ] && share=1
  log="$out/gpu-w$w.log"
  echo "== --transport nccl --world $w ($gpus GPU(s), COLLGRAD_NCCL_SHARE_GPU=$share)"
  COLLGRAD_NCCL_SHARE_GPU=$share "$build/collgrad-check" --transport nccl --world "$w" \
    --json "$out/gpu-report-w$w.json" "$@" > "$log" 2>&1
  rc=$?
  grep -E '\*\*\*|^collgrad-check:' "$log" | head -40
  line=$(grep -E '^[0-9]+% cases passed' "$log" || echo "no summary (exit $rc, see $log)")
  summary+=("W=$w nccl: $line")
  note "$rc"
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$status"
