#!/usr/bin/env bash
# Install what is missing, build with warnings as errors, run every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/torch2-venv.sh"   # torch 2.x for its tests (DTensor, DeviceMesh, torch.compile)
"$root/scripts/jax-venv.sh"      # jax (CPU) for the JAX check's tests
"$root/scripts/build.sh" -DCG_WERROR=ON
cd "${CG_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j 2 "$@"
cd "$root"

# CG_TEST_EXTRA=1 (CI sets it): also replay and briefly grow the parser fuzz
# corpus, run memcheck on the oracle and the unit tests, and the whole suite
# under ASan+UBSan.
if [ "${CG_TEST_EXTRA:-0}" = 1 ]; then
  FUZZ_SECONDS="${FUZZ_SECONDS:-30}" "$root/scripts/fuzz.sh"
  "$root/scripts/valgrind.sh"
  "$root/scripts/sanitize.sh"
  "$root/scripts/emu-check.sh"   # the GPU path against the host emulation (tests/cuda_emu)
fi
