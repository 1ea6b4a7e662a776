#!/usr/bin/env bash
# The house's plan in numbers (issue 53): lines of production code per layer
# folder, then every production file over 400 lines and the run layer over
# 5,000 (harness/run holds what knows processes and launch, nothing more),
# and every circle of more than 3 modules a folder's includes or imports make
# (issue 63 item 4: each file readable one at a time). A module is a C file
# with its header (x.c and x.h are x) or a Python file; an edge is an include
# of a header of the same folder, or a Python import of a sibling module.
# Production code: the C tool's sources (harness/, oracles/, reports/) and
# the Python packages (python/collgrad_core, python/collgrad_torch, python/collgrad_jax); tests and examples are not.
# Exit 1 if any limit is passed.
# Usage: scripts/house-plan.sh [ROOT]
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
python3 - "$root" <<'PY'
import os, re, sys
root = sys.argv[1]
FILE_LIMIT, RUN_LIMIT, CIRCLE_LIMIT = 400, 5000, 3
folders, bad = {}, []
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)"', re.M)
# from . import a, b / from .a import x / import collgrad_x.pkg.a (the folder's own package)
PY_FROM = re.compile(r'^\s*from\s+\.(\w*)\s+import\s+([\w\s,]+?)(?:#.*)?$', re.M)


def module_edges(folder, names):
    """module -> the modules of the same folder it includes or imports."""
    modules = {os.path.splitext(n)[0] for n in names}
    edges = {m: set() for m in modules}
    for n in names:
        me = os.path.splitext(n)[0]
        with open(os.path.join(folder, n), errors="replace") as f:
            text = f.read()
        if n.endswith(".py"):
            found = set()
            for mod, what in PY_FROM.findall(text):
                found.update([mod] if mod else [w.split(" as ")[0].strip() for w in what.split(",")])
        else:
            found = {os.path.splitext(i)[0] for i in INCLUDE.findall(text)}
        edges[me] |= {t for t in found if t in modules and t != me}
    return edges


def circles(edges):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]; counter[0] += 1; stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out

for top in ("harness", "oracles", "reports", "python/collgrad_core", "python/collgrad_torch", "python/collgrad_jax"):
    for d, _, names in os.walk(os.path.join(root, top)):
        code = sorted(n for n in names if n.endswith((".c", ".h", ".cu", ".cuh", ".py")))
        for circle in circles(module_edges(d, code)):
            if len(circle) > CIRCLE_LIMIT:
                bad.append(f"{os.path.relpath(d, root)} has a circle of {len(circle)} modules "
                           f"(at most {CIRCLE_LIMIT}): {' -> '.join(circle)}")
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
