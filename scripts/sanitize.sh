#!/usr/bin/env bash
# Build everything with AddressSanitizer + UndefinedBehaviorSanitizer into
# ./build-asan (or $CG_ASAN_BUILD_DIR) and run the ctest suite there (all but the
# Python-only tests of the user-code check, below).
# Any sanitizer report aborts the process that made it, so the test fails.
# Leaks inside MPICH/UCX/hwloc (never our code) are suppressed by
# tests/lsan.supp. Extra arguments go to ctest (e.g. -R parser).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${CG_ASAN_BUILD_DIR:-$root/build-asan}"
"$root/scripts/setup.sh"

# clang when present (its UBSan checks more), else the default compiler.
cc="${CG_SANITIZE_CC:-$(command -v clang || command -v cc)}"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
quiet=""
# the project's -Wno-format-truncation is GCC's; clang would warn on every file
case "$(basename "$cc")" in clang*) quiet="-Wno-unknown-warning-option" ;; esac
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="-O1 $san $quiet" -DCMAKE_EXE_LINKER_FLAGS="$san" \
  -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null
cmake --build "$build" -j "$(nproc)"

# Every process the tests start (the tool, its MPI ranks, the test programs)
# inherits these.
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# hwloc's PCI plugin (libpciaccess) leaks and is dlclose'd before LeakSanitizer
# runs, so its frames are "<unknown module>" and no suppression can name it;
# MPI on one machine does not need PCI discovery.
export HWLOC_COMPONENTS=-pci
cd "$build"
# the user-code check's tests run Python only (collgrad_torch.check: torch, no C of
# this tree), so they gain nothing under the sanitizers and cost CI minutes; so does
# e2e_pip_install (pip and pytest alone: it ran past its 300 s here, 50 s without); and so do the
# checks of the tree itself (house plan, include graph, layering probes), which run none of it,
# and e2e_toy_kind, which tests a build of its own (with the toy kind), not this one
ctest --output-on-failure -j 2 -E '^(python_(usercode_|types|jax_)|e2e_jax_|e2e_(pip_install|house_plan|include_graph|layers|toy_kind)$)' "$@"
