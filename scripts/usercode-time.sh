#!/usr/bin/env bash
# How long one collgrad_torch.check takes here, process start-up included (issue
# 35's targets: W=2 with 64 input elements per rank under 10 s, W=4 under 20 s).
# Prints each run's wall time (this process's, from before check() to its return),
# the finite-difference points, and the time of one bare start-up of W ranks
# (python -c 'import torch' W times at once) for scale. Not a test: a measurement.
#   scripts/usercode-time.sh [RUNS]      (default 3 runs per world)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
PY="${COLLGRAD_PYTHON:-/usr/bin/python3}"
runs="${1:-3}"
PYTHONPATH="$root/python" "$PY" - "$root/examples/user_code/sized.py" "$runs" <<'PY'
import subprocess, sys, time
import collgrad_torch as cg

path, runs = sys.argv[1], int(sys.argv[2])
print(f"{'W':>2}  {'elements/rank':>13}  {'fd points':>9}  {'check s':>8}  {'bare start-up s':>15}  verdict")
for world, target in ((2, 10.0), (4, 20.0)):
    for _ in range(runs):
        t0 = time.monotonic()
        procs = [subprocess.Popen([sys.executable, "-c", "import torch, torch.distributed"]) for _ in range(world)]
        for p in procs:
            p.wait()
        bare = time.monotonic() - t0
        t0 = time.monotonic()
        r = cg.check(f"{path}:gather_matmul", world=world, inputs=f"{path}:make_inputs")
        took = time.monotonic() - t0
        points = 2 * sum(c.numel for c in r.checks) + 2
        print(f"{world:>2}  {64:>13}  {points:>9}  {took:>8.2f}  {bare:>15.2f}  {r.status}"
              f"{'' if took < target else f'  (over the {target:g} s target)'}")
PY
