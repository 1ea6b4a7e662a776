"""The case language's tensor constructors and local ops in jax.numpy (the
PyTorch runner's twin is collgrad_torch/runner/ops.py; the C one
harness/interp/interp_call.c). `p` is the program (program.Program): its
failure messages, its static integers and its rounding to the case dtype.
Constructors build each device's values on the host (the C random streams,
rank by rank) and the device reads its own row."""

import math
from typing import Any, Callable, Dict, List

import jax
import jax.numpy as jnp
import numpy as np

from collgrad_core import rng
from collgrad_core.ir import Node, Op

from .values import PerDevice, Tensor, derived

_UNARY: Dict[str, Callable[[Any], Any]] = {
    "exp": jnp.exp, "log": jnp.log, "tanh": jnp.tanh, "relu": jax.nn.relu, "abs": jnp.abs, "neg": jnp.negative,
    "clone": lambda x: x, "sqrt": jnp.sqrt, "norm": lambda x: jnp.linalg.norm(x.reshape(-1)),
    "transpose": lambda x: jnp.swapaxes(x, -2, -1) if x.ndim >= 2 else x,
    "gelu": lambda x: jax.nn.gelu(x, approximate=False),   # torch's and the C tool's: the erf form
}
_REDUCTIONS: Dict[str, Callable[..., Any]] = {"sum": jnp.sum, "mean": jnp.mean,
                                            "logsumexp": jax.scipy.special.logsumexp}
_SOFTMAXES: Dict[str, Callable[..., Any]] = {"softmax": jax.nn.softmax, "log_softmax": jax.nn.log_softmax}


def construct(p: Any, e: Node, args: List[Any]) -> Tensor:
    """ones, zeros, full, rand, randn, arange, eye: float64 values rounded to
    the case dtype as the C side does, per device where they depend on the rank."""
    name, nodes = e["name"], e["args"]
    if name in ("arange", "eye"):
        v = [0, -1, 0]
        for k, a in enumerate(args[:3]):
            v[k] = p.static_int(a, nodes[k], "a size")
        if name == "arange":
            return Tensor(p.rounded(np.arange(v[0], dtype=np.float64)))
        cols = v[0] if v[1] < 0 else v[1]
        return Tensor(p.rounded((np.arange(cols)[None, :] == np.arange(v[0])[:, None] + v[2]).astype(np.float64)))
    first = 1 if name == "full" else 0
    shape = [p.static_int(args[k], nodes[k], "a dimension") for k in range(first, len(args))]
    if any(d < 0 for d in shape):
        raise p.fail(e, f"expected dimensions >= 0, got {shape}")
    if name in ("ones", "zeros"):
        return Tensor(p.rounded(np.full(shape, 1.0 if name == "ones" else 0.0)))
    if name == "full":
        if isinstance(args[0], Tensor):
            raise p.fail(nodes[0], "expected a number to fill with, got a tensor")
        fill = args[0] if isinstance(args[0], PerDevice) else PerDevice((float(args[0]),) * p.world)
        return Tensor(p.per_device([np.full(shape, v) for v in fill.values]))
    n = math.prod(shape)
    rows = []
    for rank in range(p.world):  # each device's own stream: (case seed, rank, key)
        key = rng.key(p.case.seed, rank, e["rng_key"])
        draw = [rng.uniform(key, i, p.case.dtype) for i in range(n)] if name == "rand" else \
               [rng.normal(key, i) for i in range(n)]
        rows.append(np.array(draw, dtype=np.float64).reshape(shape))
    return Tensor(p.per_device(rows))


def _axis(p: Any, t: Tensor, v: Any, node: Any, default: int) -> int:
    if v is None:
        return default
    a = p.static_int(v, node, "an axis")
    if a < 0:
        a += len(t.shape)
    if a < 0 or a >= max(len(t.shape), 1):
        raise p.fail(node, f"expected an axis in [0, {len(t.shape)}), got {a}")
    return a


def local_op(p: Any, e: Node, op: Op, args: List[Any], kwargs: Dict[str, Any]) -> Tensor:
    """Every local tensor function of the language, jax.numpy's op for each,
    by its class in the tool's op table."""
    name = e["name"]
    if op.cls == "call":
        return _CALLS[name](p, e, args, kwargs)
    t = p.tensor(args[0])
    if name == "detach":
        return Tensor(jax.lax.stop_gradient(t.x))
    if op.cls == "unary":
        return derived(_UNARY[name](t.x), t)
    if op.cls == "binary":
        other = p.tensor(args[1])
        if name == "pow":
            return derived(jnp.power(t.x, other.x), t, other)
        if name == "matmul":
            return derived(jnp.matmul(t.x, other.x), t, other)
        return derived(_cross_entropy(p, e, t.x, other.x), t, other)
    if op.cls in ("axis", "axis_last"):
        given = args[1] if len(args) > 1 else kwargs.get("axis")
        node = e["args"][1] if len(args) > 1 else e["kwargs"].get("axis")
        if op.cls == "axis_last":
            return derived(_SOFTMAXES[name](t.x, axis=_axis(p, t, given, node, max(len(t.shape) - 1, 0))), t)
        dim = _axis(p, t, given, node, -1)
        return derived(_REDUCTIONS[name](t.x) if dim < 0 else _REDUCTIONS[name](t.x, axis=dim), t)
    raise p.fail(e, f"expected a tensor function, got '{name}'")


def _cross_entropy(p: Any, e: Node, logits: Any, labels: Any) -> Any:
    """torch's cross_entropy (mean over the batch) of logits [B, C] and class labels [B]."""
    if logits.ndim != 2 or labels.ndim != 1 or labels.shape[0] != logits.shape[0]:
        raise p.fail(e, "expected logits [B, C] and labels [B]")
    picked = jnp.take_along_axis(jax.nn.log_softmax(logits, axis=1),
                                 jax.lax.stop_gradient(labels).astype(jnp.int32)[:, None], axis=1)
    return -jnp.mean(picked)


def _cat(p: Any, e: Node, args: List[Any], kwargs: Dict[str, Any]) -> Tensor:
    ts = [p.tensor(a) for a in args]
    ax = _axis(p, ts[0], kwargs.get("axis"), e["kwargs"].get("axis"), 0)
    return derived(jnp.concatenate([t.x for t in ts], axis=ax), *ts)


def _pieces(p: Any, e: Node, args: List[Any], kwargs: Dict[str, Any]) -> Tensor:
    name, nodes, t = e["name"], e["args"], p.tensor(args[0])
    k = p.static_int(args[1], nodes[1], "a number of chunks" if name == "chunk" else "a chunk size")
    rows = t.shape[0] if t.shape else 1
    n = k if name == "chunk" else (rows // k if k > 0 else 0)
    if not t.shape or n <= 0 or rows % n or (name == "split" and rows // n != k):
        raise p.fail(nodes[1], f"expected a piece count that cuts {rows} rows into equal pieces, got {k}")
    return derived(t.x.reshape((n, rows // n) + t.shape[1:]), t)


def _reshape(p: Any, e: Node, args: List[Any], kwargs: Dict[str, Any]) -> Tensor:
    t = p.tensor(args[0])
    return derived(t.x.reshape([p.static_int(a, e["args"][k + 1], "a dimension") for k, a in enumerate(args[1:])]), t)


def _slice(p: Any, e: Node, args: List[Any], kwargs: Dict[str, Any]) -> Tensor:
    nodes, t = e["args"], p.tensor(args[0])
    ax = p.static_int(args[1], nodes[1], "an axis")
    if ax < 0 or ax >= len(t.shape):
        raise p.fail(nodes[1], f"expected an axis in [0, {len(t.shape)}), got {ax}")
    return p.slice_rows(t, args[2], args[3], nodes[2], ax)


_CALLS = {"cat": _cat, "chunk": _pieces, "split": _pieces, "reshape": _reshape, "slice": _slice}

_ENTRIES = {"ctor": ("ones", "zeros", "full", "rand", "randn", "arange", "eye"), "leaf": ("param",),
            "unary": tuple(_UNARY) + ("detach",), "binary": ("pow", "matmul", "cross_entropy"),
            "axis": tuple(_REDUCTIONS), "axis_last": tuple(_SOFTMAXES), "call": tuple(_CALLS)}


def missing(table: Dict[str, Op]) -> List[str]:
    """The ops of the tool's table this module has no entry for."""
    return sorted(name for name, op in table.items() if name not in _ENTRIES.get(op.cls, ()))
