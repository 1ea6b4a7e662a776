#!/usr/bin/env bash
# Install what is missing, build with warnings as errors, run every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" -DCG_WERROR=ON
cd "${CG_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j 2 "$@"
