#!/usr/bin/env bash
# Configure and build into ./build (or $CG_BUILD_DIR). Extra arguments go to cmake.
# The build type is RelWithDebInfo (or $CG_BUILD_TYPE) for a new build directory, or one
# configured with none; an existing one keeps its own unless CG_BUILD_TYPE says otherwise.
# scripts/run.sh (a README command, which e2e_readme_commands runs in whatever build
# directory the suite uses) once turned scripts/sanitize.sh's Debug build into
# RelWithDebInfo, rebuilding all of it inside that serial test (and the next sanitizer run
# rebuilt it back).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${CG_BUILD_DIR:-$root/build}"
type=()
kept=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
if [ -n "${CG_BUILD_TYPE:-}" ] || [ -z "$kept" ]; then
  type=(-DCMAKE_BUILD_TYPE="${CG_BUILD_TYPE:-RelWithDebInfo}")
fi
cmake -S "$root" -B "$build" "${type[@]}" "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
