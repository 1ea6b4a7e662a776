#!/usr/bin/env bash
# The main job: install what is missing, build, and run every built-in case on
# the defaults, printing a ctest-like summary and writing out/report.json.
# Extra arguments go to collgrad-check (e.g. --verbose, --world 4).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
mkdir -p "$root/out"
exec "${CG_BUILD_DIR:-$root/build}/collgrad-check" --json "$root/out/report.json" "$@"
