#!/usr/bin/env bash
# The GPU path on a machine without a GPU, against tests/cuda_emu: the in-tree
# EMULATION of the CUDA runtime, cuBLAS and NCCL (it proves host logic and kernel
# arithmetic, not GPU behaviour; tests/cuda_emu/README.md). Builds with
# -DCG_CUDA_EMU=ON -DCG_WERROR=ON into ./build-emu (or $CG_EMU_BUILD_DIR), then runs
# every cudatest_* (the kernels against the CPU ops, CUDA graphs against host graphs,
# the nccl transport at W = 1, 2) and cuda_emu_* test (the emulation's own guards),
# e2e_device_run (the tool end to end: built-in cases over --transport nccl with the
# tensors on the device, W = 1, 2) and e2e_nccl_nogpu (the refusal when no device is
# visible, CG_CUDA_EMU_DEVICES=0); then once more the kernel tests with blocks and
# threads in reverse order
# (CG_CUDA_EMU_ORDER=reverse). Every test must PASS: the emulated device is always
# there, so a skip is a failure here. Prints each program's pass count. Extra arguments
# go to ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${CG_EMU_BUILD_DIR:-$root/build-emu}"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${CG_BUILD_TYPE:-RelWithDebInfo}" \
  -DCG_CUDA_EMU=ON -DCG_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
cd "$build"

status=0
counts=()
# run LABEL ctest-args...: the tests must all pass, none skipped; keeps the pass counts
run() {
  local label="$1" log rc=0
  shift
  log="$(mktemp)"
  ctest --output-on-failure --no-tests=error -j 2 "$@" 2>&1 | tee "$log" || rc=$?
  if [ "$rc" -ne 0 ]; then
    status=1
  fi
  if grep -qE '\*\*\*Skipped|\*\*\*Not Run|\(Skipped\)|\(Not Run\)|\(Disabled\)' "$log"; then
    echo "emu-check: a test was skipped or not run; under the emulation every one must run"
    status=1
  fi
  rm -f "$log"
  while IFS= read -r line; do
    counts+=("$label$line")
  done < <(grep -aE '^(cudatest_[a-z_]+( -n [0-9]+)?|cuda_emu_[a-z]+): [0-9]+ passed' \
             Testing/Temporary/LastTest.log || true)
}

echo "== emu-check: the CUDA tests against the emulated CUDA device"
run "" -R '^(cudatest_|cuda_emu_|e2e_device_run$|e2e_nccl_nogpu$)' "$@"
echo "== emu-check: the kernel tests again, blocks and threads in reverse order"
export CG_CUDA_EMU_ORDER=reverse
run "reverse order: " -R '^(cudatest_ops|cudatest_graph|cudatest_local|cuda_emu_kernel)$' "$@"
unset CG_CUDA_EMU_ORDER

echo "== emu-check summary (EMULATED device: host logic and kernel arithmetic, not a GPU)"
printf '%s\n' "${counts[@]}"
[ "$status" -eq 0 ] && echo "emu-check: all passed" || echo "emu-check: FAILED"
exit "$status"
