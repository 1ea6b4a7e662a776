"""The device process: one fresh interpreter per check, whose W devices are
XLA's host devices.

XLA reads --xla_force_host_platform_device_count once, when the backend
starts, so a world of W devices needs a process of its own: check() starts
`python -m collgrad_jax.device_run SPEC OUT` with the flag, float64 and the
CPU platform in its environment, and reads back what it measured (a
Measured, JSON) or its error. Its stdout and stderr go to a file, whose tail
an error quotes: what the user's code printed before a crash is never lost.
The process writes its phase as it moves on (measure.phase); one that stops
moving for `timeout` seconds is asked for its stacks (SIGUSR1) and named
with its phase and the user's line it waits at, one that dies with its exit
status or signal and its phase.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, List, Optional, TypedDict

from collgrad_torch.checker.stacks import waiting_call
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


STARTUP_S = 60.0    # before the first phase: starting Python and importing jax on a loaded machine


def run(spec: Spec, *, timeout: float, python: Optional[str] = None) -> Measured:
    """Start the device process on spec and return what it measured; a hang
    is `timeout` seconds without a new phase."""
    world = spec["world"]
    who = f"the device process (devices 0-{world - 1}, one process)" if world > 1 else "the device process"
    with tempfile.TemporaryDirectory(prefix="collgrad-jax-") as tmp:
        spec_path, out_path, log_path = (os.path.join(tmp, n) for n in ("spec.json", "out.json", "output.log"))
        status_path, stack_path = os.path.join(tmp, "status"), os.path.join(tmp, "stack")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        argv = [python or sys.executable, "-m", "collgrad_jax.device_run", spec_path, out_path]
        with open(log_path, "w+", encoding="utf-8", errors="replace") as log:
            try:
                p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     env=environment(world), start_new_session=True)
            except OSError as e:
                raise DeviceError(f"cannot start the device process ({argv[0]}): {e}", ExitClass.INFRA) from None
            try:
                rc = _watch(p, status_path, timeout)
            except _Hang as h:
                where = _where(p, stack_path)
                _end(p)
                raise DeviceError(f"{who} did not move on for {h.limit:g} s (timeout=) during {_phase(status_path)}: "
                                  f"a hang; it {where}" + _said(log_path), ExitClass.INFRA) from None
            finally:
                _end(p)
        try:
            with open(out_path, encoding="utf-8") as f:
                out = json.load(f)
        except (OSError, ValueError):
            how = f"exit status {rc}" if rc >= 0 else f"signal {-rc} ({_signal_name(-rc)})"
            raise DeviceError(f"{who} ended during {_phase(status_path)} with {how}, without a result"
                              + _said(log_path), ExitClass.INFRA) from None
        if "error" in out:
            text = out["error"]
            said = _tail(log_path).strip()
            raise DeviceError(text + (f"\nthe device process printed:\n{said}" if said else ""),
                              int(out.get("class", ExitClass.INFRA)))
        return out


class _Hang(Exception):
    def __init__(self, limit: float):
        super().__init__(limit)
        self.limit = limit


def _watch(p: "subprocess.Popen[bytes]", status_path: str, timeout: float) -> int:
    """Wait for p, its exit status; _Hang when its phase stops moving."""
    moved, last = time.monotonic(), None
    while True:
        try:
            return p.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            pass
        status = _read(status_path)
        now = time.monotonic()
        if status != last:
            moved, last = now, status
        limit = timeout if last is not None else max(timeout, STARTUP_S)
        if now - moved > limit:
            raise _Hang(limit)


def _where(p: "subprocess.Popen[bytes]", stack_path: str) -> str:
    """Where the hung process waits: its stacks on SIGUSR1 (device_run registers faulthandler)."""
    try:
        os.kill(p.pid, signal.SIGUSR1)
    except OSError:
        return "could not be asked where it waits"
    for _ in range(20):
        time.sleep(0.05)
        if _read(stack_path):
            time.sleep(0.1)   # the rest of the dump
            break
    return waiting_call(_read(stack_path) or "", main="collgrad_jax/", library="site-packages/jax/",
                        own=("site-packages/jax/", "site-packages/jaxlib/", "site-packages/numpy/", "collgrad_jax/",
                             "collgrad_torch/", "<frozen "))


def _end(p: "subprocess.Popen[bytes]") -> None:
    """Kill the device process's whole session (it started none of its own, but the user's code may) and reap it."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
    p.wait()


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _phase(status_path: str) -> str:
    status = _read(status_path)
    return status.strip().partition("\t")[2] if status else "start-up (importing jax)"


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return "unknown"


def _said(log_path: str) -> str:
    tail = _tail(log_path).rstrip()
    return f"; its output ends:\n{tail}" if tail else "; it printed nothing"


def _tail(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return text if len(text) <= TAIL else "...\n" + text[-TAIL:]
