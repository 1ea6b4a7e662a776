"""The device process: one fresh interpreter per check, whose W devices are
XLA's host devices.

XLA reads --xla_force_host_platform_device_count once, when the backend
starts, so a world of W devices needs a process of its own: check() starts
`python -m collgrad_jax.device_run SPEC OUT` with the flag, float64 and the
CPU platform in its environment, and reads back what it measured (a
Measured, JSON) or its error. Its stdout and stderr go to a file, whose tail
an error quotes: what the user's code printed before a crash is never lost.
"""

import json
import os
import subprocess
import sys
import tempfile
from typing import Any, List, Optional, TypedDict

from collgrad_torch.exit_class import ExitClass

TAIL = 4000  # characters of the process's output an error quotes


class Spec(TypedDict):
    """What the device process checks (api.plan writes it)."""
    make_loss: str       # FILE.py:NAME or MODULE:NAME
    inputs: str
    world: int
    mesh: List[List[Any]]  # [name, size] per axis, row-major: [["i", W]] or [["dp", 2], ["tp", 2]]
    fd: str              # auto, element, fast
    fd_budget: int
    reduction: str       # sum, mean
    seed: int
    vma: str             # both, as_written
    atol: float          # the tolerances a difference's error bound is weighed against (fd_error)
    rtol: float


class Block(TypedDict):
    """One device's block of one input's gradient, beside its truth's rows."""
    device: int
    coords: List[int]    # the device's place on each mesh axis
    index: str           # the block in the global array: "[2:4]", "[:]" for a whole copy
    observed: List[float]
    rows: List[List[float]]   # per element (or direction): d L_k / d x for each loss k
    bounds: List[float]  # per element: the error bound of sum_k d L_k / d x (fd_error)
    steps: List[float]   # per element: the step it was taken at


class Input(TypedDict):
    name: str
    shape: List[int]
    spec: str            # the gradient's sharding, as JAX prints it
    blocks: List[Block]


class Flipped(TypedDict, total=False):
    """The run with every shard_map's check_vma flipped."""
    check_vma: bool      # the value it ran with
    error: str           # JAX refused it (at trace, forward or backward)
    base: float          # its global loss at the inputs
    inputs: List[Input]  # its gradients (rows empty: the truth is the as-written run's)


class Measured(TypedDict):
    jax: str
    mesh: List[List[Any]]    # [name, size] per axis
    mode: str            # element or fast
    losses: int          # 1: one global loss; W: one per device
    base: List[List[float]]   # the loss components at the inputs, three evaluations
    inputs: List[Input]
    written: List[bool]  # check_vma of each jax.shard_map call, as written
    flipped: Optional[Flipped]
    notes: List[str]


class DeviceError(Exception):
    """The device process could not measure: its class says whose fault."""

    def __init__(self, message: str, error_class: int):
        super().__init__(message)
        self.error_class = error_class


def environment(world: int) -> "dict[str, str]":
    """The device process's environment: W host devices, CPU only, float64,
    and this package importable as the parent imports it."""
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if "xla_force_host_platform_device_count" not in f]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [here] + [p for p in sys.path if p]
    return dict(os.environ, XLA_FLAGS=" ".join(flags + [f"--xla_force_host_platform_device_count={world}"]),
                JAX_PLATFORMS="cpu", JAX_ENABLE_X64="1", PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)))


def run(spec: Spec, *, timeout: float, python: Optional[str] = None) -> Measured:
    """Start the device process on spec and return what it measured."""
    with tempfile.TemporaryDirectory(prefix="collgrad-jax-") as tmp:
        spec_path, out_path, log_path = (os.path.join(tmp, n) for n in ("spec.json", "out.json", "output.log"))
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        argv = [python or sys.executable, "-m", "collgrad_jax.device_run", spec_path, out_path]
        with open(log_path, "w+", encoding="utf-8", errors="replace") as log:
            try:
                p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     env=environment(spec["world"]))
            except OSError as e:
                raise DeviceError(f"cannot start the device process ({argv[0]}): {e}", ExitClass.INFRA) from None
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                raise DeviceError(f"the device process did not finish in {timeout:g} s (timeout=); its output:\n"
                                  + _tail(log_path), ExitClass.INFRA) from None
        try:
            with open(out_path, encoding="utf-8") as f:
                out = json.load(f)
        except (OSError, ValueError):
            raise DeviceError(f"the device process ended (exit status {rc}) without a result; its output:\n"
                              + _tail(log_path), ExitClass.INFRA) from None
        if "error" in out:
            text = out["error"]
            said = _tail(log_path).strip()
            raise DeviceError(text + (f"\nthe device process printed:\n{said}" if said else ""),
                              int(out.get("class", ExitClass.INFRA)))
        return out


def _tail(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return text if len(text) <= TAIL else "...\n" + text[-TAIL:]
