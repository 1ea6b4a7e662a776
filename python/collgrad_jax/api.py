"""The public API: check(), assert_gradients(), and the errors they raise.

check() validates its arguments (CheckError, before anything starts), runs
the W devices in a fresh process (devices.py, one per world: XLA fixes the
host device count when it starts) and judges what that process measured
(judge.py) into the PyTorch check's Result."""

import math
import os
import time
from typing import Any, Callable, List, Literal, Mapping, Optional, Union

from collgrad_core import options, refs
from collgrad_core.options import FdMode, Reduction
from collgrad_core.errors import CheckError, GradientMismatch
from collgrad_core.result import Result
from collgrad_core.exit_class import ExitClass

from . import devices, judge as judgemod

Fn = Union[str, Callable[..., Any]]
Vma = Literal["both", "as_written"]

# the tolerances are the shared ones (jax.test_util.check_grads' float64 atol is 1e-5 too)
MAX_WORLD = 64        # host devices in one process; a bigger world is a typo, not a test


def check(make_loss: Fn, *, world: Optional[int] = None, inputs: Fn, mesh: Optional[Mapping[str, int]] = None,
          fd: FdMode = "auto", fd_budget: int = 4096, reduction: Reduction = "sum", atol: Optional[float] = None,
          rtol: Optional[float] = None, seed: int = 0, vma: Vma = "both", timeout: float = 120.0,
          python: Optional[str] = None, name: Optional[str] = None, processes: int = 1) -> Result:
    """Check every device's block of jax.grad of the global loss against
    central finite differences of the same loss.

    make_loss(mesh) returns f(**inputs(world)): the global scalar loss, or a
    [W] array of per-device losses whose sum (reduction="mean": mean) is the
    global loss. The mesh make_loss gets is a 1-D jax Mesh of `world` (default
    4) CPU devices, axis name 'i', or the mesh `mesh` names, axis by axis
    ({"dp": 2, "tp": 2}: W = 4, device (d, t) at d * 2 + t); its axes are of
    type Auto (so shard_map places global arrays as its in_specs say).
    Each input's gradient is split into the blocks its sharding gives each
    device (a replicated input: one copy per device), and each block is
    compared with the finite-difference truth of the same elements (float64;
    fd="element" per element while the inputs have at most fd_budget
    elements in all, "fast" one random direction per block beyond).
    Per-device losses also give each device's own-loss and device 0's
    derivatives, for the patterns "own loss only" and "replicated".

    vma="both" also runs f with every jax.shard_map's check_vma flipped and
    notes when the gradients differ (or JAX refuses the flip); "as_written"
    runs it as written only.

    processes=P spreads the W devices over P processes of W / P devices each,
    joined by jax.distributed (a multi-host program, its collectives between
    the processes over gloo on the loopback): each process runs the same
    program on the global arrays, and process 0's measurement is judged.

    Functions are passed by reference (module-level functions or
    "FILE.py:NAME"): the device process imports them. Returns a Result; bad
    arguments raise CheckError, and what goes wrong while running is the
    Result's error with its class (2: the code, 3: infrastructure).
    """
    result, spec = plan(make_loss, world=world, inputs=inputs, mesh=mesh, fd=fd, fd_budget=fd_budget,
                        reduction=reduction, atol=atol, rtol=rtol, seed=seed, vma=vma, timeout=timeout, name=name,
                        processes=processes)
    t0 = time.monotonic()
    try:
        measured = devices.run(spec, timeout=timeout, python=python)
    except devices.DeviceError as e:
        result.error, result.error_class = str(e), e.error_class
    else:
        try:
            judgemod.judge(measured, result)
        except judgemod.Refused as e:
            result.error, result.error_class = str(e), ExitClass.USAGE
    result.seconds = time.monotonic() - t0
    return result


def _axes(world: Optional[int], mesh: Optional[Mapping[str, int]]) -> List[List[Any]]:
    """The mesh's axes as [name, size] pairs: `mesh`'s, or one axis 'i' of `world` devices."""
    if mesh is None:
        world = 4 if world is None else world
        if not (isinstance(world, int) and not isinstance(world, bool) and 1 <= world <= MAX_WORLD):
            raise CheckError(f"world must be an integer in 1..{MAX_WORLD} (host devices in one process), "
                             f"got {world!r}")
        return [["i", world]]
    if not isinstance(mesh, Mapping) or not mesh or not all(
            isinstance(k, str) and k.isidentifier() and isinstance(v, int) and not isinstance(v, bool) and v >= 1
            for k, v in mesh.items()):
        raise CheckError(f"mesh must map axis names to sizes >= 1 ({{'dp': 2, 'tp': 2}}), got {mesh!r}")
    size = math.prod(mesh.values())
    if size > MAX_WORLD:
        raise CheckError(f"mesh {dict(mesh)} has {size} devices, more than {MAX_WORLD}")
    if world is not None and world != size:
        raise CheckError(f"world={world!r} but mesh {dict(mesh)} has {size} devices: give one of them")
    return [[k, v] for k, v in mesh.items()]


def plan(make_loss: Fn, *, world: Optional[int], inputs: Fn, mesh: Optional[Mapping[str, int]], fd: str,
         fd_budget: int, reduction: str, atol: Optional[float], rtol: Optional[float], seed: int, vma: str,
         timeout: float, name: Optional[str], processes: int = 1) -> "tuple[Result, devices.Spec]":
    """check()'s arguments checked (CheckError), as an empty Result and the
    spec the device process reads."""
    axes = _axes(world, mesh)
    size = math.prod(int(n) for _, n in axes)
    options.refuse(reduction=reduction, fd=fd, atol=atol, rtol=rtol, fd_budget=fd_budget, seed=seed,
                   timeout=timeout, name=name)
    if vma not in ("both", "as_written"):
        raise CheckError(f"vma must be 'both' or 'as_written', got {vma!r}")
    if not (isinstance(processes, int) and not isinstance(processes, bool) and processes >= 1 and size % processes == 0):
        raise CheckError(f"processes must be a positive integer dividing the {size} devices, got {processes!r}")
    try:
        ref = refs.ref_of(make_loss, "make_loss")
        inputs_ref = refs.ref_of(inputs, "inputs")
    except refs.RefError as e:
        raise CheckError(str(e)) from None
    for what, r in (("make_loss", ref), ("inputs", inputs_ref)):
        where = r.rsplit(":", 1)[0]
        if where.endswith(".py") and not os.path.isfile(where):
            raise CheckError(f"{what}: {where}: no such file")
    result = Result(name=name or ref, ref=ref, world=size, backend="jax:cpu", kind="fn", semantics="per_rank",
                    reduction=reduction, seed=seed, framework="jax",
                    isolation="process" if processes == 1 else f"{processes} processes (jax.distributed)",
                    atol=options.DEFAULT_ATOL if atol is None else atol,
                    rtol=options.DEFAULT_RTOL if rtol is None else rtol)
    spec: devices.Spec = {"make_loss": ref, "inputs": inputs_ref, "world": size, "mesh": axes, "fd": fd,
                          "fd_budget": fd_budget, "reduction": reduction, "seed": seed, "vma": vma,
                          "atol": result.atol, "rtol": result.rtol, "processes": processes, "coordinator": ""}
    return result, spec


def assert_gradients(make_loss: Fn, **kwargs: Any) -> Result:
    """check(), raising GradientMismatch (its message the table) unless every gradient is right."""
    result = check(make_loss, **kwargs)
    if not result.ok:
        raise GradientMismatch(result)
    return result
