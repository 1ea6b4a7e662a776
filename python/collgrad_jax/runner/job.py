"""One case at one world through jax.shard_map: the forward, each
backward()'s gradients by jax.vjp, accumulated as PyTorch's .grad
accumulates them (zero_grad() clears), and each device's line in the
PyTorch runner's format (collgrad_torch/runner/results.py)."""

import time
import traceback
import warnings
from typing import Any, Dict, List, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from collgrad_torch.runner.ir import Case
from collgrad_torch.runner.result_files import number

from .program import CaseError, Program
from .values import Unsupported

AXIS = "i"


def _values(a: Any) -> List[Any]:
    return [number(float(v)) for v in np.asarray(a, dtype=np.float64).reshape(-1)]


def _trace(case: Case, world: int, deltas: Optional[List[Any]], box: Dict[str, Program]) -> Any:
    prog = Program(case, world, deltas)
    box["program"] = prog
    prog.run()
    roots = jnp.stack(prog.roots)[None] if prog.roots else jnp.zeros((1, 0), jnp.float64)
    return roots, [t.x[None] for t, _ in prog.env.values()]


def _error(e: BaseException, phase: str, at: str, by: str) -> Dict[str, Any]:
    tb = traceback.extract_tb(e.__traceback__)
    return {"type": type(e).__name__, "message": str(e)[:4000], "phase": phase, "at": at,
            "origin": f"{tb[-1].filename}:{tb[-1].lineno}" if tb else "", "by": by}


def run(case: Case, mesh: Mesh, vma: bool) -> List[Dict[str, Any]]:
    """Each device's line for the case (without "job" and "rank")."""
    world = mesh.size
    t0 = time.monotonic()
    line: Dict[str, Any] = {"case": case.name, "outcome": "ok", "warnings": [], "tensors": []}
    box: Dict[str, Program] = {}
    phase, at = "forward", case.file
    dummy = jnp.zeros((world,))

    def spmd(fn: Any) -> Any:
        return jax.shard_map(fn, mesh=mesh, in_specs=P(AXIS), out_specs=P(AXIS), check_vma=vma)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            jax.eval_shape(spmd(lambda d, *ds: _trace(case, world, None, box)), dummy)
            slots = box["program"].slots
            zeros = [jnp.zeros((world,) + shape, dtype) for shape, dtype in slots]
            f = spmd(lambda d, *ds: _trace(case, world, [x[0] for x in ds], box))
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
            line.update(outcome="raised", error=_error(e, phase, where, "framework"))
            return [dict(line, seconds=time.monotonic() - t0) for _ in range(world)]
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
    _, vjp = jax.vjp(lambda *ds: f(dummy, *ds)[0], *zeros)
    grads: Dict[int, Any] = {}
    for ev in prog.events:
        if ev[0] == "zero_grad":
            grads.clear()
            continue
        _, c, reached, _ = ev
        cot = jnp.zeros((world, len(prog.roots)), jnp.float64).at[:, c].set(1.0)
        got = vjp(cot)
        for k in reached:
            grads[k] = got[k] if k not in grads else grads[k] + got[k]
    return grads
