"""A case program as the body of a jax.shard_map: every device runs it
once, together (the PyTorch runner's twin, one rank per process, is
collgrad_torch/runner/interp.py; the semantics are docs/case-language.md's).

Numbers are PerDevice (values.py): rank is (0, ..., W-1), so what depends
on the rank stays concrete per device. A branch all devices take, or none,
runs or not; one that only some take cannot be one SPMD program
(Unsupported). Every binding that requires a gradient is a slot: its value
plus a zero input of the shard_map (`deltas`), so jax.vjp's cotangent of
that input is the binding's gradient, named tensors and params alike, as
PyTorch's retain_grad reports them. A first trace (deltas None) only
records the slots' shapes.
"""

import math
from typing import Any, Callable, Dict, List, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from collgrad_core.ir import Case, Node, position
from collgrad_core.scalar_ops import SCALAR_OPS
from collgrad_core.walk import Walk

from . import collectives, local_ops
from .spelling import Spelling, is_varying
from .values import PerDevice, Tensor, Unsupported, derived

DTYPES = {"f32": jnp.float32, "f64": jnp.float64, "bf16": jnp.bfloat16, "f16": jnp.float16}
_TENSOR_OPS: Dict[str, Callable[..., Any]] = {"+": jnp.add, "-": jnp.subtract, "*": jnp.multiply,
                                             "/": jnp.divide, "**": jnp.power, "@": jnp.matmul}


def _is_backward(st: Node) -> bool:
    return st["kind"] == "call" and st["expr"]["name"] == "backward"


def _numbers(v: Any) -> Any:
    """v's number per device, if it is one (a number, or a tensor bound from one and needing no gradient)."""
    if isinstance(v, Tensor):
        return v.numbers if not v.grad else None
    return v


PROCESS_GROUPS = "process groups (group(), mesh()): not expressed in the 1-D mesh yet"


class CaseError(Exception):
    """The program is not valid ("file:line:col: expected ..."): the two interpreters disagree."""


class Program(Walk):
    """One SPMD trace of a case: the IR's walk (collgrad_core/walk.py) with
    JAX's values and operations. After run(): `slots` (each slot's shape, in
    creation order), `roots` (each backward's root, summed to a scalar),
    `events` (("backward", root index, its slots) and ("zero_grad",) in
    program order), `env` (name -> (final tensor, its slot or -1)) and
    `ran` (the JAX primitives its communication used, in first use order)."""

    def __init__(self, case: Case, world: int, deltas: Optional[List[Any]], spelling: Spelling = Spelling()):
        super().__init__(case, world)
        self.deltas, self.spelling = deltas, spelling
        self.ran: List[str] = []
        self.dtype = DTYPES[case.dtype]
        self.idx = jax.lax.axis_index("i")
        self.env: Dict[str, Tuple[Tensor, int]] = {}
        self.slots: List[Tuple[Tuple[int, ...], Any, bool]] = []   # (shape, dtype, varying) of each slot
        self.roots: List[Any] = []
        self.events: List[Tuple[Any, ...]] = []
        self.pending: List[Tuple[PerDevice, Tensor]] = []   # sends not yet received: (destinations, value)
        self.only: Any = None    # inside `on r { backward(...) }`: whether this device is one of the r

    def note(self, primitive: str) -> None:
        if primitive not in self.ran:
            self.ran.append(primitive)

    # ---- values ------------------------------------------------------------

    def fail(self, node: Node, message: str) -> CaseError:
        return CaseError(f"{position(self.case, node)}: {message} (world {self.world})")

    def rounded(self, values: np.ndarray) -> Any:
        """float64 host values in the case dtype, as cg_round_to rounds them (half types through float32)."""
        v = np.asarray(values, dtype=np.float64)
        if self.dtype in (jnp.bfloat16, jnp.float16):
            v = v.astype(np.float32)
        return jnp.asarray(v).astype(self.dtype)

    def per_device(self, rows: List[np.ndarray]) -> Any:
        """Each device's own values: a constant when they agree, else the device's row of a table."""
        if all(np.array_equal(r, rows[0], equal_nan=True) for r in rows[1:]):
            return self.rounded(rows[0])
        return self.rounded(np.stack(rows))[self.idx]

    def number_of(self, v: Any, node: Node, what: str) -> PerDevice:
        """v as a number per device: a number, or a tensor bound from one (cg_val_int accepts those)."""
        if isinstance(v, Tensor):
            if v.numbers is None:
                raise self.fail(node, f"expected {what} (a number), got a tensor")
            return v.numbers
        return v

    def static_int(self, v: Any, node: Node, what: str) -> int:
        """v as one integer every device agrees on (a shape, an axis, a root)."""
        u = self.number_of(v, node, what).uniform
        if u is None:
            values = ", ".join(f"{x:g}" for x in self.number_of(v, node, what).values)
            raise Unsupported(f"one SPMD program, one shape: {what} differs between devices ({values})")
        if not math.isfinite(u) or u != math.floor(u) or abs(u) > 1e15:
            raise self.fail(node, f"expected {what} (an integer), got {u:g}")
        return int(u)

    def tensor(self, v: Any) -> Tensor:
        if isinstance(v, Tensor):
            return v
        return Tensor(self.per_device([np.array(x, dtype=np.float64) for x in v.values]), numbers=v)

    def number(self, value: float) -> PerDevice:
        return PerDevice((value,) * self.world)

    def rank_number(self) -> PerDevice:
        return PerDevice(tuple(float(d) for d in range(self.world)))

    def is_tensor(self, v: Any) -> bool:
        return isinstance(v, Tensor)

    def shape(self, t: Tensor) -> Tuple[int, ...]:
        return tuple(t.shape)

    def rows(self, t: Tensor, lo: int, hi: int) -> Tensor:
        return Tensor(t.x[lo:hi], t.grad, t.slots)

    def scalar_map(self, v: PerDevice, fn: Callable[[float], float]) -> PerDevice:
        return v.map(fn)

    def negate(self, t: Tensor) -> Tensor:
        return derived(jnp.negative(t.x), t)

    def slot(self, t: Tensor) -> Tuple[Tensor, int]:
        """A binding that requires a gradient becomes a slot (its value plus
        its zero delta); others are bound as they are (-1)."""
        if not t.grad:
            return t, -1
        k = len(self.slots)
        # whether check_vma types the value as varying (a psum's result is not): a zero of another
        # type added to it would change the program JAX differentiates (see job._trace_in_body)
        self.slots.append((t.shape, t.x.dtype, is_varying(t.x)))
        x = t.x + self.deltas[k].reshape(t.shape) if self.deltas is not None else t.x
        return Tensor(x, True, t.slots | {k}, t.root_only), k

    # ---- statements ----------------------------------------------------------

    def on_block(self, st: Node) -> None:
        member = self.members(st)
        if all(member):
            self.stmts(st["body"])
        elif any(member) and all(_is_backward(b) for b in st["body"]):
            self.only = jnp.asarray(member)[self.idx]   # the others' roots are 0: they call no backward
            self.stmts(st["body"])
            self.only = None
        elif any(member):
            ranks = ", ".join(str(r) for r, m in enumerate(member) if m)
            raise Unsupported(f"a block only ranks {ranks} run: SPMD runs every statement on every "
                              "device (a block of backward() calls alone is expressed)")

    def members(self, st: Node) -> List[bool]:
        member = [False] * self.world
        for e in st["ranks"]:
            v = self.eval(e)
            if isinstance(v, str):
                raise Unsupported(PROCESS_GROUPS)
            for d, r in enumerate(self.number_of(v, e, "a rank").values):
                member[d] |= r == d
        return member

    def bind(self, name: str, t: Tensor) -> None:
        t, k = self.slot(t)
        self.env[name] = (t, k)   # a rebinding keeps the name's first place, as the PyTorch runner's dict

    def make_groups(self, e: Node, names: List[str]) -> None:
        raise Unsupported(PROCESS_GROUPS)

    def group_call(self, e: Node) -> Any:
        raise Unsupported(PROCESS_GROUPS)

    def zero_grad(self, e: Node) -> None:
        self.events.append(("zero_grad",))

    def backward(self, e: Node, root: Any) -> None:
        t = self.tensor(root)
        self.events.append(("backward", len(self.roots), t.slots, self.where))
        total = jnp.sum(t.x).astype(jnp.float64)   # backward seeds ones: the sum's gradient
        self.roots.append(total if self.only is None else jnp.where(self.only, total, 0.0))

    def send(self, e: Node, args: List[Any]) -> None:
        dest = self.number_of(args[1], e["args"][1], "a destination rank")
        self.pending.append((dest, self.tensor(args[0])))

    # ---- expressions ---------------------------------------------------------

    def lookup(self, e: Node) -> Any:
        if e["name"] not in self.env:
            raise self.fail(e, f"expected '{e['name']}' to be defined, got no assignment to it")
        return self.env[e["name"]][0]

    def ternary(self, e: Node) -> Any:
        """c ? a : b. Where the devices disagree on c, both sides are
        evaluated and each device takes its own: numbers per device, tensors
        of one shape by jnp.where on the device's condition."""
        c = self.number_of(self.eval(e["args"][0]), e["args"][0], "a condition")
        if c.uniform is not None:
            return self.eval(e["args"][1] if c.uniform != 0 else e["args"][2])
        a, b = self.eval(e["args"][1]), self.eval(e["args"][2])
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            return PerDevice(tuple(x if k != 0 else y for k, x, y in zip(c.values, a.values, b.values)))
        ta, tb = self.tensor(a), self.tensor(b)
        if ta.shape != tb.shape:
            raise Unsupported(f"one SPMD program, one shape: a rank-dependent choice between tensors of shapes "
                              f"{list(ta.shape)} and {list(tb.shape)}")
        take = jnp.asarray([k != 0 for k in c.values])[self.idx]
        return derived(jnp.where(take, ta.x, tb.x), ta, tb)

    def list_literal(self, e: Node) -> Tensor:
        rows = []
        for d in range(self.world):
            def build(node: Node) -> Any:
                if node["kind"] == "list":
                    return [build(i) for i in node["items"]]
                return self.number_of(self.eval(node), node, "a number in a list literal").values[d]
            rows.append(np.array(build(e), dtype=np.float64))
        if any(r.shape != rows[0].shape or r.dtype == object for r in rows):
            raise self.fail(e, "expected a rectangular list, got a ragged one")
        return Tensor(self.per_device(rows))

    def binary(self, e: Node) -> Any:
        op = e["op"]
        a, b = self.eval(e["args"][0]), self.eval(e["args"][1])
        na, nb = _numbers(a), _numbers(b)
        plain = not isinstance(a, Tensor) and not isinstance(b, Tensor)
        if na is not None and nb is not None and op != "@" and (plain or op in ("+", "-", "*", "/", "**")):
            numbers = na.zip(nb, SCALAR_OPS[op])  # a number bound as a tensor stays a number in arithmetic
            return numbers if plain else self.tensor(numbers)
        if op not in _TENSOR_OPS:
            raise self.fail(e, f"expected numbers on both sides of '{op}', got a tensor")
        ta, tb = self.tensor(a), self.tensor(b)
        xa, xb = ta.x, tb.x
        if op != "@" and ta.shape != tb.shape:  # only a one-element operand broadcasts
            if tb.x.size == 1 and ta.x.size != 1:
                xb = xb.reshape(())
            elif ta.x.size == 1 and tb.x.size != 1:
                xa = xa.reshape(())
        return derived(_TENSOR_OPS[op](xa, xb), ta, tb)

    def index(self, e: Node) -> Tensor:
        args = e["args"]
        t = self.eval(args[0])
        if not isinstance(t, Tensor) or not t.shape:
            raise self.fail(e, "expected a tensor with at least one dimension to index")
        lo = self.eval(args[1]) if len(args) > 1 and args[1] else PerDevice((0.0,) * self.world)
        if not e.get("slice"):
            lo = self.number_of(lo, args[1] or e, "an index")
            out = self.slice_rows(t, lo, lo.map(lambda v: v + 1 if v != -1 else t.shape[0]), args[1] or e, 0)
            return Tensor(out.x[0], out.grad, out.slots)
        hi = self.eval(args[2]) if len(args) > 2 and args[2] else PerDevice((float(t.shape[0]),) * self.world)
        return self.slice_rows(t, lo, hi, args[1] or e, 0)

    def slice_rows(self, t: Tensor, lo: Any, hi: Any, node: Node, axis: int) -> Tensor:
        """t[lo:hi] along axis: static where the devices agree on lo, a
        dynamic slice where they agree on the length only."""
        lo, hi = self.number_of(lo, node, "an index"), self.number_of(hi, node, "an index")
        n = t.shape[axis]
        los = [int(v) + (n if v < 0 else 0) for v in lo.values]
        his = [int(v) + (n if v < 0 else 0) for v in hi.values]
        sizes = {h - l for l, h in zip(los, his)}
        if len(sizes) != 1:
            raise Unsupported("one SPMD program, one shape: a slice whose length differs between devices")
        size = sizes.pop()
        if any(l < 0 or h > n or size < 0 for l, h in zip(los, his)):
            raise self.fail(node, f"expected a slice inside [0, {n}), got {los[0]}:{his[0]}")
        if len(set(los)) == 1:
            return derived(jax.lax.slice_in_dim(t.x, los[0], los[0] + size, axis=axis), t)
        start = jnp.asarray(los, dtype=jnp.int32)[self.idx]
        return derived(jax.lax.dynamic_slice_in_dim(t.x, start, size, axis=axis), t)

    def communicate(self, e: Node) -> Tensor:
        return collectives.communicate(self, e)

    def construct(self, e: Node, args: List[Any]) -> Tensor:
        return local_ops.construct(self, e, args)

    def leaf(self, v: Any) -> Tensor:
        return Tensor(jax.lax.stop_gradient(self.tensor(v).x).astype(self.dtype), True)

    def local_op(self, e: Node, op: Any, args: List[Any], kwargs: Dict[str, Any]) -> Tensor:
        return local_ops.local_op(self, e, op, args, kwargs)
