#!/usr/bin/env bash
# What a warm world saves (issue 36 item 2's measure): a session of N checks at W
# ranks (default 20 at W=4) must cost at most 1.5 x one check's start-up plus the
# checks themselves. Measured in one run, here:
#   cold  = one check in a fresh world (the best of 2), wall time around check();
#   each  = the median of the warm session's checks 2..N (their own time, no start);
#   start = cold - each (what a fresh world adds to one check);
#   session = the wall time of the N checks inside one warm_worlds().
# The bound is 1.5 x start + each (the first check's own part) + the warm checks 2..N as
# each took; the cost today (a fresh world per check) is
# about N x cold. The checks cycle through examples/user_code (right and wrong ones,
# sized to the world). Exit 1 when the bound does not hold. A measurement, not a test.
#   scripts/warm-time.sh [N] [W]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
PY="${COLLGRAD_PYTHON:-/usr/bin/python3}"
PYTHONPATH="$root/python" "$PY" - "$root/examples/user_code" "${1:-20}" "${2:-4}" <<'PY'
import statistics, sys, time
import collgrad_torch as cg

ex, n, world = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fns = [("seed_allreduce", "sum_nn"), ("seed_allreduce", "product_nn"), ("moe", "moe"),
       ("seed_gatherlayer", "blog_gatherlayer"), ("custom_function", "wrong_cube")]

def one(i):
    module, fn = fns[i % len(fns)]
    return cg.check(f"{ex}/{module}.py:{fn}", world=world, inputs=f"{ex}/{module}.py:make_inputs", timeout=120)

colds = []
for _ in range(2):
    t0 = time.monotonic()
    one(0)
    colds.append(time.monotonic() - t0)
cold = min(colds)
t0 = time.monotonic()
times, statuses = [], []
with cg.warm_worlds() as warm:
    for i in range(n):
        t1 = time.monotonic()
        r = one(i)
        times.append(time.monotonic() - t1)
        statuses.append(r.status)
    starts = warm.starts()
session = time.monotonic() - t0
each = statistics.median(times[1:]) if n > 1 else times[0]
start = max(cold - each, 0.0)
bound = 1.5 * start + each + sum(times[1:])
print(f"W={world}, {n} checks ({statuses.count('pass')} pass, {statuses.count('fail')} fail, "
      f"{statuses.count('error')} error); rank processes started {starts} time(s)")
print(f"  one check in a fresh world (cold): {cold:.2f} s   (runs: {', '.join(f'{c:.2f}' for c in colds)})")
print(f"  a warm check (median of 2..{n}):    {each:.3f} s")
print(f"  start-up (cold - warm check):      {start:.2f} s")
print(f"  the session of {n} warm checks:      {session:.2f} s   (first check {times[0]:.2f} s)")
print(f"  bound 1.5 x start-up + the checks:  {bound:.2f} s   -> {'holds' if session <= bound else 'DOES NOT HOLD'}")
print(f"  {n} fresh worlds (today, about):     {n * cold:.1f} s   ({n * cold / session:.1f}x the session)")
sys.exit(0 if session <= bound and "error" not in statuses else 1)
PY
