#!/usr/bin/env bash
# How long one JAX check takes here, start-up included (issue 54's target: W=4 with
# 64 input elements under 10 s): the wall time of `python -m collgrad_jax check` as a
# shell runs it (the interpreter, the device process with its W host devices, jax's
# import and compiles, the finite differences, the check_vma flip), per run, and of a
# bare `python -c 'import jax'` for scale. Not a test: a measurement.
#   scripts/jax-time.sh [RUNS]      (default 3; CG_JAX_PYTHON picks the interpreter)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
PY="${CG_JAX_PYTHON:-/opt/venv-jax/bin/python}"
runs="${1:-3}"
ex="$root/examples/jax/sized.py"
export PYTHONPATH="$root/python"
"$PY" - "$PY" "$ex" "$runs" <<'PY'
import subprocess, sys, time

py, ex, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
print(f"{'W':>2}  {'elements':>8}  {'vma':>10}  {'check s':>8}  {'import jax s':>12}  verdict")
worst = 0.0
for vma in ("both", "as_written"):
    for _ in range(runs):
        t0 = time.monotonic()
        subprocess.run([py, "-c", "import jax"], check=True)
        bare = time.monotonic() - t0
        t0 = time.monotonic()
        out = subprocess.run([py, "-m", "collgrad_jax", "check", f"{ex}:make_loss", "--inputs", f"{ex}:make_inputs",
                              "--world", "4", "--vma", vma], capture_output=True, text=True)
        took = time.monotonic() - t0
        worst = max(worst, took)
        verdict = {0: "pass", 1: "fail"}.get(out.returncode, f"exit {out.returncode}")
        print(f"{4:>2}  {64:>8}  {vma:>10}  {took:>8.2f}  {bare:>12.2f}  {verdict}")
print(f"slowest: {worst:.2f} s against the 10 s target: {'met' if worst < 10 else 'MISSED'}")
sys.exit(0 if worst < 10 else 1)
PY
