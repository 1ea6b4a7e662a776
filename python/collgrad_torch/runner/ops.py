"""The case language's tensor constructors and local ops on one rank, each
torch's own op (the C twins are harness/interp/interp_call.c and harness/autograd/ops_*.c). `r` is
the interpreter (interp.Rank): its failure messages, integer arguments and
rounding to the case dtype."""

import math
from typing import Dict, List, Optional

import torch

from collgrad_core import rng
from collgrad_core.ir import Node, Op

Value = object  # float or torch.Tensor

# The entries of the tool's op table (harness/lang/op_table.h, the IR's "ops"), by class; a
# document whose table names an op missing here is refused before it runs (missing()).
_UNARY = {"exp": torch.exp, "log": torch.log, "tanh": torch.tanh, "relu": torch.relu,
          "abs": torch.abs, "neg": torch.neg, "clone": torch.clone, "detach": torch.Tensor.detach,
          "sqrt": torch.sqrt, "norm": lambda t: torch.linalg.vector_norm(t.reshape(-1)),
          "transpose": lambda t: t.transpose(-2, -1) if t.dim() >= 2 else t.clone(),
          "gelu": torch.nn.functional.gelu}

_REDUCTIONS = {"sum": torch.sum, "mean": torch.mean, "logsumexp": torch.logsumexp}  # class axis

_SOFTMAXES = {"log_softmax": torch.log_softmax, "softmax": torch.softmax}  # class axis_last

CONSTRUCTORS = ("ones", "zeros", "full", "rand", "randn", "arange", "eye")


def construct(r, e: Node, args: List[Value]) -> torch.Tensor:
    """ones, zeros, full, rand, randn, arange, eye: float64 values rounded to the
    case dtype as the C side does (rand/randn: the C random streams)."""
    name = e["name"]
    nodes = e["args"]
    if name in ("arange", "eye"):
        v = [0, -1, 0]
        for k, a in enumerate(args[:3]):
            v[k] = r.integer(a, nodes[k], "a size")
        if name == "arange":
            return r.rounded(torch.arange(v[0], dtype=torch.float64))
        cols = v[0] if v[1] < 0 else v[1]
        i = torch.arange(v[0]).reshape(-1, 1)
        j = torch.arange(cols).reshape(1, -1)
        return r.rounded((j == i + v[2]).to(torch.float64))
    first = 1 if name == "full" else 0
    shape = []
    for k in range(first, len(args)):
        d = r.integer(args[k], nodes[k], "a dimension")
        if d < 0:
            raise r.fail(nodes[k], f"expected a dimension >= 0, got {d}")
        shape.append(d)
    if name in ("ones", "zeros"):
        return r.rounded(torch.full(shape, 1.0 if name == "ones" else 0.0, dtype=torch.float64))
    if name == "full":
        if isinstance(args[0], torch.Tensor):
            raise r.fail(nodes[0], "expected a number to fill with, got a tensor")
        return r.rounded(torch.full(shape, float(args[0]), dtype=torch.float64))
    key = rng.key(r.case.seed, r.rank, e["rng_key"])
    n = math.prod(shape)
    if name == "rand":
        values = [rng.uniform(key, i, r.case.dtype) for i in range(n)]
    else:
        values = [rng.normal(key, i) for i in range(n)]
    return r.rounded(torch.tensor(values, dtype=torch.float64).reshape(shape))


def axis(r, t: torch.Tensor, v: Optional[Value], node: Optional[Node], default: int) -> int:
    """An axis argument, Python-style negatives allowed; default when absent."""
    if v is None:
        return default
    a = r.integer(v, node, "an axis")
    if a < 0:
        a += t.dim()
    if a < 0 or a >= max(t.dim(), 1):
        raise r.fail(node, f"expected an axis in [0, {t.dim()}), got {a}")
    return a


def local_op(r, e: Node, op: Op, args: List[Value], kwargs: Dict[str, Value]) -> torch.Tensor:
    """Every local tensor function of the language, torch's own op for each, by its class in
    the tool's op table."""
    name = e["name"]
    if op.cls == "call":
        return _CALLS[name](r, e, args, kwargs)
    t = r.tensor(args[0])
    if op.cls == "unary":
        return _UNARY[name](t)
    if op.cls == "binary":
        return _BINARY[name](r, e, t, r.tensor(args[1]))
    if op.cls in ("axis", "axis_last"):
        given = args[1] if len(args) > 1 else kwargs.get("axis")
        node = e["args"][1] if len(args) > 1 else e["kwargs"].get("axis")
        if op.cls == "axis_last":
            return _SOFTMAXES[name](t, axis(r, t, given, node, max(t.dim() - 1, 0)))
        dim = axis(r, t, given, node, -1)
        if dim < 0:
            return _REDUCTIONS[name](t.reshape(-1), 0) if name == "logsumexp" else _REDUCTIONS[name](t)
        return _REDUCTIONS[name](t, dim)
    raise r.fail(e, f"expected a tensor function, got '{name}'")


def _cat(r, e: Node, args: List[Value], kwargs: Dict[str, Value]) -> torch.Tensor:
    xs = [r.tensor(a) for a in args]
    return torch.cat(xs, axis(r, xs[0], kwargs.get("axis"), e["kwargs"].get("axis"), 0))


def _pieces(r, e: Node, args: List[Value], kwargs: Dict[str, Value]) -> torch.Tensor:
    """torch.chunk(t, n) / torch.split(t, size) on dim 0, the equal pieces stacked."""
    name, nodes, t = e["name"], e["args"], r.tensor(args[0])
    k = r.integer(args[1], nodes[1], "a number of chunks" if name == "chunk" else "a chunk size")
    rows = t.shape[0] if t.dim() else 1
    n = k if name == "chunk" else (rows // k if k > 0 else 0)
    if t.dim() == 0 or n <= 0 or rows % n or (name == "split" and rows // n != k):
        what = "a number of chunks" if name == "chunk" else "a chunk size"
        raise r.fail(nodes[1], f"expected {what} that cuts the first axis ({rows} rows) into equal "
                               f"pieces, got {k}")
    pieces = torch.chunk(t, n) if name == "chunk" else torch.split(t, k)
    return torch.stack(list(pieces))


def _reshape(r, e: Node, args: List[Value], kwargs: Dict[str, Value]) -> torch.Tensor:
    return r.tensor(args[0]).reshape([r.integer(a, e["args"][k + 1], "a dimension")
                                      for k, a in enumerate(args[1:])])


def _slice(r, e: Node, args: List[Value], kwargs: Dict[str, Value]) -> torch.Tensor:
    nodes, t = e["args"], r.tensor(args[0])
    ax, lo, hi = (r.integer(args[k], nodes[k], "an axis" if k == 1 else "an index") for k in (1, 2, 3))
    if ax < 0 or ax >= t.dim():
        raise r.fail(nodes[1], f"expected an axis in [0, {t.dim()}), got {ax}")
    return t[(slice(None),) * ax + (slice(lo, hi),)]


def cross_entropy(r, e: Node, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """torch's cross_entropy (mean over the batch) of logits [B, C] and class
    labels [B], which the language holds as whole numbers in a float tensor."""
    if logits.dim() != 2 or labels.dim() != 1 or labels.numel() != logits.shape[0]:
        raise r.fail(e, f"expected logits [B, C] and labels [B], got {logits.dim()}-D logits "
                        f"and {labels.numel()} labels")
    classes = logits.shape[1]
    for b, v in enumerate(labels.detach().tolist()):
        if not (0 <= v < classes and v == math.floor(v)):
            raise r.fail(e, f"expected class labels in 0..{classes - 1}, got {v:g} at {b}")
    return torch.nn.functional.cross_entropy(logits, labels.detach().long())


_BINARY = {"pow": lambda r, e, a, b: torch.pow(a, b), "matmul": lambda r, e, a, b: torch.matmul(a, b),
           "cross_entropy": cross_entropy}

_CALLS = {"cat": _cat, "chunk": _pieces, "split": _pieces, "reshape": _reshape, "slice": _slice}

_ENTRIES = {"ctor": CONSTRUCTORS, "leaf": ("param",), "unary": _UNARY, "binary": _BINARY,
            "axis": _REDUCTIONS, "axis_last": _SOFTMAXES, "call": _CALLS}


def missing(table: Dict[str, Op]) -> List[str]:
    """The ops of the tool's table this module has no entry for (of that class): a document
    naming one comes from a tool newer than this package."""
    return sorted(name for name, op in table.items() if name not in _ENTRIES.get(op.cls, ()))


def entries() -> Dict[str, str]:
    """Every op this module can run, with its class (tests: the same as the tool's table)."""
    return {name: cls for cls, names in _ENTRIES.items() for name in names}
