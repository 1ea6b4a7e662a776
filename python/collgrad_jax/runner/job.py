"""One case at one world through jax.shard_map: the forward, each
backward()'s gradients by jax.vjp, accumulated as PyTorch's .grad
accumulates them (zero_grad() clears), and each device's line in the
PyTorch runner's format (collgrad_torch/runner/results.py), with "ran":
the primitives it used.

The vjp is taken of the whole shard_map, each device's roots a row of its
output, unless the case's `jax` line says otherwise (spelling.py): with
loss=replicated the roots are returned under out_specs=P(), with
backward=in_body each backward() is a jax.vjp of its root inside the
body, as a device's own program would call it."""

import time
import traceback
import warnings
from typing import Any, Dict, List, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from collgrad_core.ir import Case
from collgrad_core.result_files import number

from . import spelling as spellings
from .program import CaseError, Program
from .spelling import Spelling
from .values import Unsupported

AXIS = "i"


def _values(a: Any) -> List[Any]:
    return [number(float(v)) for v in np.asarray(a, dtype=np.float64).reshape(-1)]


def _trace(case: Case, world: int, deltas: Optional[List[Any]], box: Dict[str, Any], sp: Spelling) -> Any:
    prog = Program(case, world, deltas, sp)
    box["program"] = prog
    prog.run()
    roots = jnp.stack(prog.roots) if prog.roots else jnp.zeros((0,), jnp.float64)
    return roots if sp.loss == "replicated" else roots[None], [t.x[None] for t, _ in prog.env.values()]


def _trace_in_body(case: Case, world: int, deltas: List[Any], box: Dict[str, Any], sp: Spelling) -> Any:
    """The program, then each backward()'s gradients by a jax.vjp of its root
    inside the body (the cotangent ones of the root's own type), accumulated
    as in _gradients; the slots with a gradient are box["graded"]. Each
    slot's zero (its primal here) has its value's type under check_vma, so
    the program differentiated is the one written: a varying zero added to
    psum's invariant result would insert a pvary, whose transpose sums the
    devices' cotangents."""
    def forward(*ds: Any) -> Any:
        prog = Program(case, world, list(ds), sp)
        box["program"] = prog
        prog.run()
        return prog.roots, [t.x for t, _ in prog.env.values()]

    roots, vjp, values = jax.vjp(forward, *deltas, has_aux=True)
    grads: Dict[int, Any] = {}
    for ev in box["program"].events:
        if ev[0] == "zero_grad":
            grads.clear()
            continue
        _, c, reached, _ = ev
        got = vjp([jnp.ones_like(r) if k == c else jnp.zeros_like(r) for k, r in enumerate(roots)])
        for k in reached:
            grads[k] = got[k] if k not in grads else grads[k] + got[k]
    box["graded"] = sorted(grads)
    stacked = jnp.stack(roots)[None] if roots else jnp.zeros((1, 0), jnp.float64)
    return stacked, [v[None] for v in values], [grads[k][None] for k in sorted(grads)]


def _error(e: BaseException, phase: str, at: str, by: str) -> Dict[str, Any]:
    tb = traceback.extract_tb(e.__traceback__)
    return {"type": type(e).__name__, "message": str(e)[:4000], "phase": phase, "at": at,
            "origin": f"{tb[-1].filename}:{tb[-1].lineno}" if tb else "", "by": by}


def run(case: Case, mesh: Mesh, vma: bool) -> List[Dict[str, Any]]:
    """Each device's line for the case (without "job" and "rank")."""
    world = mesh.size
    t0 = time.monotonic()
    line: Dict[str, Any] = {"case": case.name, "outcome": "ok", "warnings": [], "tensors": []}
    box: Dict[str, Any] = {}
    phase, at = "forward", case.file
    dummy = jnp.zeros((world,))
    sp = spellings.of_case(case.jax, mesh)
    roots_spec = P() if sp.loss == "replicated" and sp.backward == "outside" else P(AXIS)

    def spmd(fn: Any, out_specs: Any = (roots_spec, P(AXIS))) -> Any:
        return jax.shard_map(fn, mesh=mesh, in_specs=P(AXIS), out_specs=out_specs, check_vma=vma)

    def ran() -> Dict[str, Any]:   # the first whole trace's, else the one that raised so far
        used = sp.notes() + box.get("ran", box["program"].ran if "program" in box else [])
        return {"ran": ", ".join(used)} if used else {}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            jax.eval_shape(spmd(lambda d, *ds: _trace(case, world, None, box, sp)), dummy)
            slots, box["ran"] = box["program"].slots, box["program"].ran
            zeros = [jnp.zeros((world,) + shape, dtype) for shape, dtype, _ in slots]
            if sp.backward == "in_body":
                def in_body(d: Any, *ds: Any) -> Any:   # a value the body types invariant gets an invariant zero
                    own = [x[0] if varying else jnp.zeros(shape, dtype) for x, (shape, dtype, varying) in zip(ds, slots)]
                    return _trace_in_body(case, world, own, box, sp)
                g = spmd(in_body, P(AXIS))
                roots, values, graded = jax.jit(g)(dummy, *zeros)
                grads = dict(zip(box["graded"], graded))
                prog = box["program"]
            else:
                f = spmd(lambda d, *ds: _trace(case, world, [x[0] for x in ds], box, sp))
                roots, values = jax.jit(f)(dummy, *zeros)
                prog = box["program"]
                phase, at = "backward", next((ev[3] for ev in prog.events if ev[0] == "backward"), at)
                grads = _gradients(f, dummy, zeros, prog, world)
        except Unsupported as e:  # the reason first: the matrix's cell shows its start
            where = box["program"].where if "program" in box else case.file
            return [dict(line, outcome="skipped", reason=f"{e} (shard_map cannot express it; {where})",
                         seconds=time.monotonic() - t0) for _ in range(world)]
        except CaseError as e:
            line.update(outcome="raised", error=_error(e, phase, at, "interpreter"))
            return [dict(line, seconds=time.monotonic() - t0) for _ in range(world)]
        except Exception as e:  # whatever JAX raised is the finding
            where = box["program"].where if phase == "forward" and "program" in box else at
            line.update(outcome="raised", error=_error(e, phase, where, "framework"), **ran())
            return [dict(line, seconds=time.monotonic() - t0) for _ in range(world)]
        line.update(ran())
        line["warnings"] = [{"phase": "forward", "at": "", "category": w.category.__name__,
                             "message": str(w.message)} for w in caught]
    out = []
    for d in range(world):
        tensors = []
        for (name, (t, k)), v in zip(prog.env.items(), values):
            g = grads.get(k) if k >= 0 else None
            if t.root_only is not None and d != t.root_only:
                g = None   # the language gives a reduce or gather output off its root no gradient
            tensors.append({"name": name, "shape": list(t.shape), "value": _values(v[d]),
                            "grad": None if g is None else _values(g[d])})
        out.append(dict(line, tensors=tensors, seconds=time.monotonic() - t0))
    return out


def _gradients(f: Any, dummy: Any, zeros: List[Any], prog: Program, world: int) -> Dict[int, Any]:
    """Each slot's gradient at the program's end: the sum, over the
    backward() calls since the last zero_grad() whose root depends on it, of
    that root's vjp (PyTorch accumulates .grad so); a slot no such root
    reaches has none."""
    if not prog.roots or not zeros:
        return {}
    calls = [ev[1] for ev in prog.events if ev[0] != "zero_grad"]

    def vjps(d: Any, *ds: Any) -> List[Any]:   # one program for every call: op by op, each op compiles alone
        roots, vjp = jax.vjp(lambda *xs: f(d, *xs)[0], *ds)
        return [vjp(jnp.zeros(roots.shape, jnp.float64).at[..., c].set(1.0)) for c in calls]  # [W, roots] or [roots]

    each = iter(jax.jit(vjps)(dummy, *zeros))
    grads: Dict[int, Any] = {}
    for ev in prog.events:
        if ev[0] == "zero_grad":
            grads.clear()
            continue
        got, reached = next(each), ev[2]
        for k in reached:
            grads[k] = got[k] if k not in grads else grads[k] + got[k]
    return grads
