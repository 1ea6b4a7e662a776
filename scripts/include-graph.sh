#!/usr/bin/env bash
# The include graph between layer folders (design.md section 6): one line per
# edge "from -> to (N includes)", then every include that runs from a lower
# layer to a higher one and every cycle between layered folders. Exit 1 if
# there is any, or a source file outside every layer folder.
# Usage: scripts/include-graph.sh [ROOT]
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
python3 - "$root" <<'PY'
import os, re, sys
root = sys.argv[1]
# bottom first; a layer's folder holds its files and those of its subfolders
# (transports/nccl). The CUDA kernels sit with the ops
# they serve, but the rule sets' kernel (rules_local.cu) belongs to the rules.
order = ["harness/lang", "harness/autograd", "harness/collectives", "harness/interp", "harness/transports",
         "harness/rules", "oracles", "reports", "harness/run", "harness/bench", "harness/pytorch", "harness/matrix", "harness/explore",
         "harness/tool"]
def layer_of(path):
    if path.startswith("harness/cuda/"):
        return "harness/rules" if os.path.basename(path).startswith("rules_") else "harness/autograd"
    for l in order:
        if path.startswith(l + "/"):
            return l
    return None  # in no layer: a violation of its own
files, where = [], {}
for top in ("harness", "oracles", "reports"):
    for d, _, names in os.walk(os.path.join(root, top)):
        for n in names:
            if n.endswith((".c", ".h", ".cu", ".cuh")):
                rel = os.path.relpath(os.path.join(d, n), root)
                files.append(rel)
                where.setdefault(n, rel)
edges, bad = {}, []
for f in files:
    src = layer_of(f)
    if src is None:
        bad.append(f"{f} is in no layer folder")
        continue
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', open(os.path.join(root, f), errors="replace").read(), re.M):
        h = os.path.basename(m.group(1))
        if h not in where:
            continue
        dst = layer_of(where[h])
        if dst is None or dst == src:
            continue
        edges[(src, dst)] = edges.get((src, dst), 0) + 1
        if order.index(dst) > order.index(src):
            bad.append(f"{f} includes {where[h]}: {src} -> {dst} runs up the layers")
for (a, b), n in sorted(edges.items()):
    print(f"{a} -> {b} ({n} includes)")
cycles = [f"{a} <-> {b}" for (a, b) in edges if (b, a) in edges and a < b]
for c in cycles:
    bad.append(f"cycle: {c}")
for b in bad:
    print("VIOLATION:", b)
print(f"{len(edges)} edges between layers, {len(bad)} violations")
sys.exit(1 if bad else 0)
PY
