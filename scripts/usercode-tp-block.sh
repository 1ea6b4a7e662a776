#!/usr/bin/env bash
# How long the user-code check takes on a tensor-parallel transformer block at scale
# (issue 51 item 6): examples/user_code/parallel/tp_block.py, hidden 1024, about 12.6M
# parameters across the ranks, fd="fast", torch 2.x. For W = 2 and 4 it prints the
# parameters per rank, one bare start-up of W ranks (python -c 'import torch' W times
# at once) for scale, the correct block in a fresh world (start-up included) and again
# in the same warm world, and the planted bug's verdict with the parameters it names.
# Not a test: a measurement (python/tests/usercode_parallel.py checks the verdicts).
#   scripts/usercode-tp-block.sh            (as root: inside unshare -n, lo up)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
PY="${COLLGRAD_TORCH2_PYTHON:-/opt/venv-torch2/bin/python}"
[ -x "$PY" ] || { echo "no $PY (scripts/torch2-venv.sh makes it)" >&2; exit 2; }
PYTHONPATH="$root/python" "$PY" - "$root/examples/user_code/parallel/tp_block.py" <<'PY'
import subprocess, sys, time
import collgrad_torch as cg

path = sys.argv[1]
sys.path.insert(0, path.rsplit("/", 1)[0])
import tp_block  # noqa: E402
from collgrad_torch.checker import patterns  # noqa: E402

REPLICATED = ("norm1.", "norm2.", "attn.o.bias", "mlp.down.bias")  # a copy on every rank; the rest split


def per_rank(world: int) -> int:
    full = dict(tp_block.Block().named_parameters())
    rep = sum(p.numel() for n, p in full.items() if n.startswith(REPLICATED))
    return rep + (sum(p.numel() for p in full.values()) - rep) // world


args = dict(inputs=f"{path}:make_inputs", fd="fast", semantics="replicated", timeout=300)
print(f"{'W':>2}  {'params/rank':>11}  {'bare start-up s':>15}  {'cold check s':>12}  {'warm check s':>12}  "
      "verdict  planted bug")
for world in (2, 4):
    t0 = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", "import torch, torch.distributed"]) for _ in range(world)]
    for p in procs:
        p.wait()
    bare = time.monotonic() - t0
    t0 = time.monotonic()
    cold = cg.check(f"{path}:block", world=world, **args)
    cold_s = time.monotonic() - t0
    with cg.warm_worlds():
        cg.check(f"{path}:block", world=world, **args)  # starts the world
        t0 = time.monotonic()
        warm = cg.check(f"{path}:block", world=world, **args)
        warm_s = time.monotonic() - t0
        bug = cg.check(step=f"{path}:block_bias_twice", world=world, **args)
    if cold.error or warm.error or bug.error:
        print(cold.error or warm.error or bug.error, file=sys.stderr)
        sys.exit(1)
    bad = [c for c in bug.checks if not c.ok]
    named = sorted({c.tensor for c in bad})
    keys = sorted({patterns.key(p) for c in bad for p in c.patterns})
    print(f"{world:>2}  {per_rank(world) / 1e6:>10.2f}M  {bare:>15.2f}  {cold_s:>12.2f}  {warm_s:>12.2f}  "
          f"{cold.status:<7}  {bug.status}: {', '.join(named)} on {len({c.rank for c in bad})} of {world} "
          f"ranks ({', '.join(keys)})")
PY
