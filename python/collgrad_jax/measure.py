"""What the device process measures: jax.grad of the global loss, split into
each device's block, and the central finite differences of every loss
component at the same elements (or along one random direction per block).

Runs inside the device process (jax imported, W host devices, float64 on).
The user's functions are called here, so every way they can fail is named:
UserError (exit 2) for the code or its inputs, MachineError (exit 3) for
the machine.
"""

import inspect
import os
import time
import traceback
from typing import Any, Callable, Dict, List, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from collgrad_core import fd_error, refs

from . import vma
from .devices import Block, Flipped, Input, Measured, Spec

STEP = fd_error.STEPS[0]   # the first central-difference step on float64 inputs (gradcheck's eps)


STATUS_PATH = ""     # device_run sets it: where the phase goes, for the parent's watchdog
_last_status = 0.0


def phase(text: str, force: bool = True) -> None:
    """Progress for the parent's watchdog ("PID<TAB>PHASE", replaced as the
    measurement moves on; throttled inside the finite differences), so it
    tells a hang from slow progress and says where the process was."""
    global _last_status
    now = time.monotonic()
    if not STATUS_PATH or (not force and now - _last_status < 0.2):
        return
    _last_status = now
    tmp = STATUS_PATH + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\t{text}\n")
    os.replace(tmp, STATUS_PATH)


class UserError(Exception):
    """The user's functions or inputs are at fault (exit 2)."""


class MachineError(Exception):
    """Not the user's: the devices asked for are not there (exit 3)."""


def _raised(what: str, e: BaseException) -> UserError:
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return UserError(f"{what} raised {type(e).__name__}: {e}\n{tb}")


def make_mesh(axes: List[List[Any]]) -> Mesh:
    """The check's mesh of host devices, its axes [name, size] row-major
    (1-D: [["i", W]]), every axis of type Auto (an Explicit mesh,
    jax.make_mesh's default since 0.7, would refuse global arrays that are
    not placed already)."""
    names, shape = tuple(str(n) for n, _ in axes), tuple(int(k) for _, k in axes)
    world = int(np.prod(shape))
    found = jax.devices()
    if len(found) < world:
        raise MachineError(f"asked for {world} devices, JAX has {len(found)} ({jax.default_backend()}): "
                           "XLA_FLAGS=--xla_force_host_platform_device_count must reach the device process")
    devices = np.array(found[:world]).reshape(shape)
    try:
        from jax.sharding import AxisType
        return Mesh(devices, names, axis_types=(AxisType.Auto,) * len(names))
    except (ImportError, TypeError):  # a JAX before axis types: every mesh is Auto
        return Mesh(devices, names)


def _inputs(spec: Spec) -> Tuple[Dict[str, np.ndarray], List[str]]:
    """make_inputs(world) as float64 host arrays, and the names checked (the floating ones)."""
    make_inputs = refs.resolve(spec["inputs"])
    try:
        raw = make_inputs(spec["world"])
    except Exception as e:
        raise _raised(f"make_inputs ({spec['inputs']})", e) from None
    if not isinstance(raw, dict) or not raw or not all(isinstance(k, str) and k.isidentifier() for k in raw):
        keys = f" with keys {list(raw)}" if isinstance(raw, dict) else ""
        raise UserError(f"make_inputs ({spec['inputs']}) must return a dict of global arrays keyed by f's argument "
                        f"names, got {type(raw).__name__}{keys}")
    arrays: Dict[str, np.ndarray] = {}
    for k, v in raw.items():
        a = np.asarray(v)
        arrays[k] = a.astype(np.float64) if np.issubdtype(a.dtype, np.floating) else a
    checked = [k for k, a in arrays.items() if a.dtype == np.float64 and a.size > 0]
    if not checked:
        raise UserError(f"make_inputs ({spec['inputs']}) gave no floating-point input: nothing to differentiate")
    return arrays, checked


def _call_plan(f: Callable[..., Any], names: List[str]) -> Tuple[List[str], List[str]]:
    """How f takes the inputs: (the names passed by position, in that order;
    those passed by keyword). Read from f's signature with its wrappers
    followed (jax.jit's object, functools.partial, functools.wraps all point
    at the body whose parameters name the inputs), and passed by position
    wherever the signature allows: the function jax.shard_map returns, under
    jax.jit or not, takes (*args) and no keywords. Where the signature names
    no input (a bare (*args) wrapper), by position in make_inputs' order."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return list(names), []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
    if not set(names) <= set(positional) | keyword:
        return list(names), []
    # by position up to the last input the signature takes positionally; a parameter between
    # that is not an input would need a value the check does not have
    taken = [n for n in positional if n in names]
    upto = positional[:positional.index(taken[-1]) + 1] if taken else []
    if upto != taken:
        missing = [n for n in upto if n not in names]
        raise UserError(f"f takes {', '.join(missing)} before the inputs {', '.join(taken)}: make_inputs "
                        "must give every parameter f takes by position")
    return taken, [n for n in names if n in keyword]


class Loss:
    """f of the user's make_loss(mesh), as the check calls it: the loss
    components (1 or W) jitted for finite differences, and the gradient of the
    global loss (their sum or mean)."""

    def __init__(self, spec: Spec, mesh: Mesh, arrays: Dict[str, np.ndarray], checked: List[str]):
        make_loss = refs.resolve(spec["make_loss"])
        try:
            f = make_loss(mesh)
        except Exception as e:
            raise _raised(f"make_loss ({spec['make_loss']})", e) from None
        if not callable(f):
            raise UserError(f"make_loss ({spec['make_loss']}) must return f, the loss of the inputs; "
                            f"got {type(f).__name__}")
        self.f, self.ref, self.world, self.mean = f, spec["make_loss"], spec["world"], spec["reduction"] == "mean"
        self.spec = spec
        self.names, self.checked, self.arrays = list(arrays), checked, arrays
        self.positional, self.keywords = _call_plan(f, self.names)
        self.jitted = jax.jit(self.components)
        self.analytic: List[float] = []

    def components(self, *args: Any) -> Any:
        given = dict(zip(self.names, args))
        out = jnp.asarray(self.f(*(given[n] for n in self.positional), **{n: given[n] for n in self.keywords}))
        if out.ndim == 0:
            return out[None]
        if out.shape == (self.world,):
            return out
        raise UserError(f"f of make_loss ({self.ref}) must return the global scalar loss or one loss per device "
                        f"(shape [{self.world}]), got shape {list(out.shape)}")

    def total(self, *args: Any) -> Tuple[Any, Any]:
        """The global loss, and its components beside it (value_and_grad's aux)."""
        c = self.components(*args)
        return (jnp.mean(c) if self.mean else jnp.sum(c)), c

    def values(self, arrays: Dict[str, np.ndarray]) -> List[float]:
        try:
            return [float(v) for v in host(self.jitted(*(arrays[n] for n in self.names)))]
        except UserError:
            raise
        except Exception as e:
            raise _raised(f"f of make_loss ({self.ref})", e) from None

    def retraced(self) -> List[float]:
        """The loss components from a trace of their own: a function that draws
        its randomness or state while tracing differs from one trace to another."""
        fresh = jax.jit(lambda *a: self.components(*a))
        try:
            return [float(v) for v in host(fresh(*(self.arrays[n] for n in self.names)))]
        except Exception as e:
            raise _raised(f"f of make_loss ({self.ref})", e) from None

    def grads(self) -> Dict[str, Any]:
        """jax.grad of the global loss for each checked input; the loss
        components of the same pass are kept in self.analytic."""
        where = tuple(self.names.index(n) for n in self.checked)
        try:
            (_, parts), g = jax.jit(jax.value_and_grad(self.total, argnums=where, has_aux=True))(
                *(self.arrays[n] for n in self.names))
            self.analytic = [float(v) for v in host(parts)]
        except UserError:
            raise
        except NotImplementedError as e:
            raise UserError(f"jax.grad of f ({self.ref}) raised NotImplementedError: {e} (JAX has no "
                            "differentiation rule for a primitive f uses: pmax and pmin have none)") from None
        except Exception as e:
            raise _raised(f"jax.grad of f ({self.ref})", e) from None
        return dict(zip(self.checked, g))


def host(x: Any) -> np.ndarray:
    """x's value on this process: a global array whose blocks other processes
    hold (processes > 1: jax.distributed) is gathered from them first; every
    process calls this at the same points, since the gather is a collective."""
    if getattr(x, "is_fully_addressable", True) or getattr(x, "is_fully_replicated", False):
        return np.asarray(x)
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def _index_text(index: Sequence[Any]) -> str:
    parts = []
    for s in index:
        if isinstance(s, slice) and s.start is None and s.stop is None:
            parts.append(":")
        elif isinstance(s, slice):
            parts.append(f"{s.start or 0}:{s.stop}")
        else:
            parts.append(str(s))
    return "[" + ", ".join(parts or [":"]) + "]"


def blocks(g: Any, shape: Tuple[int, ...], mesh: Mesh) -> List[Tuple[int, str, np.ndarray, np.ndarray]]:
    """(device, index text, global flat indices, the device's values) for each
    device holding a block of g, in the mesh's device order (row-major)."""
    position = {d.id: k for k, d in enumerate(mesh.devices.flat)}
    flat = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    shards = getattr(g, "addressable_shards", None)
    if not shards:  # not a sharded jax Array (a host value): one block, device 0's
        return [(0, _index_text([]), flat.ravel(), np.asarray(g, dtype=np.float64).ravel())]
    if not g.is_fully_addressable:   # other processes hold blocks too: every block, from the gathered value
        full = host(g).astype(np.float64)
        return sorted(((position.get(d.id, d.id), _index_text(index), flat[index].ravel(), full[index].ravel())
                       for d, index in g.sharding.devices_indices_map(tuple(shape)).items()), key=lambda b: b[0])
    out = [(position.get(s.device.id, s.device.id), _index_text(s.index), flat[s.index].ravel(),
            np.asarray(s.data, dtype=np.float64).ravel()) for s in shards]
    return sorted(out, key=lambda b: b[0])


def _coords(device: int, mesh: Mesh) -> List[int]:
    return [int(c) for c in np.unravel_index(device, mesh.devices.shape)]


def _sharding_text(g: Any) -> str:
    spec = getattr(getattr(g, "sharding", None), "spec", None)
    return str(spec) if spec is not None else type(getattr(g, "sharding", g)).__name__


Row = Tuple[List[float], float, float]   # d L_k / d x for each loss k, the bound of their sum, the step


def _derivative(loss: Loss, name: str, at: np.ndarray, along: np.ndarray) -> Row:
    """d L_k / d x along `along` at the elements `at` of input name, for
    every loss k, with its error bound (fd_error): taken at h and 2h, and
    at the next step of fd_error.STEPS while the bound is over the tolerance."""
    taken = []
    phase(f"finite differences of {name}", force=False)
    for h in fd_error.STEPS:
        points = []
        for off in fd_error.OFFSETS:
            arrays = dict(loss.arrays)
            a = loss.arrays[name].copy()
            a.flat[at] += off * h * along
            arrays[name] = a
            points.append(loss.values(arrays))
        m = fd_error.measure([list(p) for p in zip(*points)], h)
        taken.append(m)
        if fd_error.resolved(m, loss.spec["atol"], loss.spec["rtol"]):
            break
    m = fd_error.best(taken)
    return m.rows, m.sum_error, m.step


def observe(loss: Loss, mesh: Mesh, mode: str, seed: int, truth: bool) -> List[Input]:
    """Each checked input's gradient, device block by device block; with
    truth, each block's finite-difference rows (element mode: per element;
    fast: one random unit direction per distinct block, shared by its copies)."""
    phase("the gradient (jax.grad of the global loss)")
    grads = loss.grads()
    out: List[Input] = []
    for i, name in enumerate(loss.checked):
        phase(f"finite differences of {name}" if truth else f"the gradient of {name}")
        shape = loss.arrays[name].shape
        found: List[Block] = []
        directions: Dict[str, np.ndarray] = {}
        rows_by_block: Dict[str, List[Row]] = {}
        for device, index, at, values in blocks(grads[name], shape, mesh):
            if mode == "element":
                rows = [_element_row(loss, name, int(e)) for e in at] if truth else []
                found.append(_block(device, _coords(device, mesh), index, [float(v) for v in values], rows))
                continue
            if index not in directions:
                rng = np.random.RandomState((seed * 1000003 + i * 1009 + len(directions)) % (1 << 32))
                v = rng.standard_normal(len(at))
                directions[index] = v / max(float(np.linalg.norm(v)), 1e-300)
                rows_by_block[index] = [_derivative(loss, name, at, directions[index])] if truth else []
            found.append(_block(device, _coords(device, mesh), index, [float(values @ directions[index])],
                                rows_by_block[index]))
        out.append({"name": name, "shape": list(shape), "spec": _sharding_text(grads[name]), "blocks": found})
    return out


def _block(device: int, coords: List[int], index: str, observed: List[float], rows: List[Row]) -> Block:
    return {"device": device, "coords": coords, "index": index, "observed": observed,
            "rows": [r[0] for r in rows], "bounds": [r[1] for r in rows], "steps": [r[2] for r in rows]}


_ELEMENT_ROWS: Dict[Tuple[int, str, int], Row] = {}


def _element_row(loss: Loss, name: str, e: int) -> Row:
    """One element's derivatives, measured once however many copies hold it."""
    key = (id(loss), name, e)
    if key not in _ELEMENT_ROWS:
        _ELEMENT_ROWS[key] = _derivative(loss, name, np.array([e]), np.array([1.0]))
    return _ELEMENT_ROWS[key]


def measure(spec: Spec) -> Measured:
    vma.install()   # before the user's module is imported: `from jax import shard_map` gets the wrapper
    mesh = make_mesh(spec["mesh"])
    phase("make_inputs")
    arrays, checked = _inputs(spec)
    phase("make_loss")
    loss = Loss(spec, mesh, arrays, checked)
    elements = sum(arrays[n].size for n in checked)
    mode = spec["fd"] if spec["fd"] != "auto" else ("element" if elements <= spec["fd_budget"] else "fast")
    inputs = observe(loss, mesh, mode, spec["seed"], truth=True)
    phase("the loss at the inputs, traced again")
    base = [loss.analytic, loss.values(arrays), loss.retraced()]  # the gradient's pass, the truth's, a fresh trace
    written = vma.written()
    notes: List[str] = []
    flipped: Any = None
    if spec["vma"] == "both" and written:
        flipped = _flipped(spec, mesh, arrays, checked, mode, written)
    elif spec["vma"] == "both":
        notes.append("f calls no jax.shard_map (as the check sees it): check_vma was not flipped")
    return {"jax": jax.__version__, "mesh": spec["mesh"], "mode": mode, "losses": len(base[0]), "base": base, "inputs": inputs,
            "written": written, "flipped": flipped, "notes": notes}


def _flipped(spec: Spec, mesh: Mesh, arrays: Dict[str, np.ndarray], checked: List[str], mode: str,
             written: List[bool]) -> Flipped:
    """The same check with every shard_map's check_vma flipped: its gradients
    (the truth stays the as-written run's), or what JAX said refusing it."""
    to = not written[0]  # each call's own opposite; the first call's names it
    phase(f"the check with check_vma flipped to {to}")
    vma.flip(True)
    try:
        loss = Loss(spec, mesh, arrays, checked)
        return {"check_vma": to, "base": sum(loss.values(arrays)),
                "inputs": observe(loss, mesh, mode, spec["seed"], truth=False)}
    except UserError as e:
        return {"check_vma": to, "error": str(e).splitlines()[0]}
    finally:
        vma.flip(False)
