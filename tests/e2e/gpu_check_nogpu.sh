#!/usr/bin/env bash
# scripts/gpu-check.sh where no GPU is: one line saying so, exit 3, before
# anything runs (issue 62 item 3: the device script refuses cleanly without a
# device). Where a GPU is visible, gpu-check.sh runs for real and this has
# nothing to check: exit 77 (skipped).
. "$(dirname "$0")/common.bash"
if [ -e /dev/nvidia0 ] || { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null |
                             grep -q '^GPU '; }; then
  echo "SKIP: a GPU is visible; this test needs none"
  exit 77
fi
if grep -q "^CG_CUDA_EMU:BOOL=ON" "$(dirname "$BIN")/CMakeCache.txt" 2>/dev/null; then
  echo "SKIP: an emulated build (gpu-check.sh runs the emulation on it: scripts/gpu-rehearse.sh)"
  exit 77
fi
expect_exit 3 -- "$SRC/scripts/gpu-check.sh" --build "$(dirname "$BIN")" --out "$TMP/out-dir"
if [ "$(wc -l < "$TMP/out")" -eq 1 ]; then ok; else bad "one line wanted"; cat "$TMP/out"; fi
expect_grep "^gpu-check: no GPU here \(nvidia-smi lists none\): run it on a machine with one \(docs/gpu.md\)$" "$TMP/out"
if [ -z "$(ls -A "$TMP/out-dir" 2>/dev/null)" ]; then ok; else bad "nothing should run"; fi
finish
