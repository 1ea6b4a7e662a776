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
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any, List, Optional, TypedDict

from collgrad_core.stacks import waiting_call
from collgrad_core.exit_class import ExitClass
from collgrad_core.result_files import read_or_none

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
    processes: int       # device processes joined by jax.distributed (1: one process holds every device)
    coordinator: str     # processes > 1: jax.distributed's coordinator, 127.0.0.1:PORT (devices.run sets it)


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
ERROR_GRACE_S = 5.0  # how long the other processes may finish after one ended (the last ones end just after)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(spec: Spec, *, timeout: float, python: Optional[str] = None) -> Measured:
    """Start the device process (or spec["processes"] of them, each with its
    share of the devices, joined by jax.distributed) on spec and return what
    process 0 measured; a hang is `timeout` seconds without a new phase in any."""
    world, n = spec["world"], spec.get("processes", 1)
    local = world // n

    def who(k: int) -> str:
        if n == 1:
            return f"the device process (devices 0-{world - 1}, one process)" if world > 1 else "the device process"
        return f"device process {k} of {n} (devices {k * local}-{(k + 1) * local - 1})"

    with tempfile.TemporaryDirectory(prefix="collgrad-jax-") as tmp:
        spec_path = os.path.join(tmp, "spec.json")
        dirs = [os.path.join(tmp, str(k)) if n > 1 else tmp for k in range(n)]
        spec["coordinator"] = f"127.0.0.1:{_free_port()}" if n > 1 else ""
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        procs: List["subprocess.Popen[bytes]"] = []
        try:
            for k, d in enumerate(dirs):
                os.makedirs(d, exist_ok=True)
                argv = [python or sys.executable, "-m", "collgrad_jax.device_run", spec_path,
                        os.path.join(d, "out.json")] + ([str(k)] if n > 1 else [])
                with open(os.path.join(d, "output.log"), "w", encoding="utf-8") as log:
                    try:
                        procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                                      stderr=subprocess.STDOUT, env=environment(local),
                                                      start_new_session=True))
                    except OSError as e:
                        raise DeviceError(f"cannot start the device process ({argv[0]}): {e}", ExitClass.INFRA) from None
            try:
                rcs = _watch(procs, [os.path.join(d, "status") for d in dirs], timeout)
            except _Hang as h:
                lines = [f"{who(k)} did not move on for {h.limit:g} s (timeout=) during "
                         f"{_phase(os.path.join(d, 'status'))}: a hang; it {_where(p, os.path.join(d, 'stack'))}"
                         for k, (p, d) in enumerate(zip(procs, dirs))]
                raise DeviceError("\n".join(lines) + _said(os.path.join(dirs[0], "output.log")), ExitClass.INFRA) \
                    from None
        finally:
            for p in procs:
                _end(p)
        outs = {}
        for k, (rc, d) in enumerate(zip(rcs, dirs)):
            try:
                with open(os.path.join(d, "out.json"), encoding="utf-8") as f:
                    outs[k] = json.load(f)
            except (OSError, ValueError):
                if rc is None and k != 0:   # ended by _watch behind another: that one says why
                    continue
                how = "was ended" if rc is None else f"exit status {rc}" if rc >= 0 else \
                    f"signal {-rc} ({_signal_name(-rc)})"
                outs[k] = {"error": f"{who(k)} ended during {_phase(os.path.join(d, 'status'))} with {how}, "
                                    "without a result" + _said(os.path.join(d, "output.log")), "class": 3,
                           "quoted": True}
        # the user's code before the machine: a process gone often shows first in another's wait
        failed = sorted((k for k in outs if "error" in outs[k]),
                        key=lambda k: (int(outs[k].get("class", ExitClass.INFRA)), k))
        if failed:
            k = failed[0]
            said = "" if outs[k].get("quoted") else _tail(os.path.join(dirs[k], "output.log")).strip()
            raise DeviceError(outs[k]["error"] + (f"\nthe device process printed:\n{said}" if said else ""),
                              int(outs[k].get("class", ExitClass.INFRA)))
        measured: Measured = outs[0]
        return measured


class _Hang(Exception):
    def __init__(self, limit: float):
        super().__init__(limit)
        self.limit = limit


def _watch(procs: "List[subprocess.Popen[bytes]]", status_paths: List[str], timeout: float) -> List[Optional[int]]:
    """Wait for every process, their exit statuses; _Hang when no phase moves.
    Once one has ended with a non-zero status, or its peers stay behind it for
    ERROR_GRACE_S (they wait for it in a collective), the rest are ended:
    their statuses None."""
    moved = time.monotonic()
    last: List[Optional[str]] = [None] * len(procs)
    first_end: Optional[float] = None
    while True:
        rcs = [p.poll() for p in procs]
        if all(rc is not None for rc in rcs):
            return rcs
        now = time.monotonic()
        if first_end is None and any(rc is not None for rc in rcs):
            first_end = now
        if first_end is not None and now - first_end > ERROR_GRACE_S:
            return rcs
        statuses = [read_or_none(s) for s in status_paths]
        if statuses != last:
            moved, last = now, statuses
        limit = timeout if all(st is not None for st in last) else max(timeout, STARTUP_S)
        if now - moved > limit:
            raise _Hang(limit)
        time.sleep(0.05)


def _where(p: "subprocess.Popen[bytes]", stack_path: str) -> str:
    """Where the hung process waits: its stacks on SIGUSR1 (device_run registers faulthandler)."""
    try:
        os.kill(p.pid, signal.SIGUSR1)
    except OSError:
        return "could not be asked where it waits"
    for _ in range(20):
        time.sleep(0.05)
        if read_or_none(stack_path):
            time.sleep(0.1)   # the rest of the dump
            break
    return waiting_call(read_or_none(stack_path) or "", main="collgrad_jax/", library="site-packages/jax/",
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


def _phase(status_path: str) -> str:
    status = read_or_none(status_path)
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
