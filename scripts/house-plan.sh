#!/usr/bin/env bash
# The house's plan in numbers (issue 53): lines of production code per layer
# folder, then every production file over 400 lines and the run layer over
# 5,000 (harness/run holds what knows processes and launch, nothing more).
# Production code: the C tool's sources (harness/, oracles/, reports/) and
# the Python packages (python/collgrad_torch, python/collgrad_jax); tests and examples are not.
# Exit 1 if any limit is passed.
# Usage: scripts/house-plan.sh [ROOT]
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
python3 - "$root" <<'PY'
import os, sys
root = sys.argv[1]
FILE_LIMIT, RUN_LIMIT = 400, 5000
folders, bad = {}, []
for top in ("harness", "oracles", "reports", "python/collgrad_torch", "python/collgrad_jax"):
    for d, _, names in os.walk(os.path.join(root, top)):
        for n in sorted(names):
            if not n.endswith((".c", ".h", ".cu", ".cuh", ".py")):
                continue
            path = os.path.join(d, n)
            rel = os.path.relpath(path, root)
            with open(path, errors="replace") as f:
                lines = sum(1 for _ in f)
            folder = os.path.dirname(rel)
            folders[folder] = folders.get(folder, 0) + lines
            if lines > FILE_LIMIT:
                bad.append(f"{rel} has {lines} lines (at most {FILE_LIMIT})")
for folder, lines in sorted(folders.items()):
    print(f"{folder}: {lines} lines")
run = folders.get("harness/run", 0)
if run > RUN_LIMIT:
    bad.append(f"harness/run has {run} lines (at most {RUN_LIMIT})")
for b in bad:
    print("VIOLATION:", b)
print(f"{len(bad)} violations")
sys.exit(1 if bad else 0)
PY
