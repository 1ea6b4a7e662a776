"""The case program on one rank, with real torch ops (the C twin is
harness/interp/interp*.c; the semantics are docs/case-language.md's).

A value is a Python float (a scalar: rank, world, 2 * rank + 1, ...) or a
torch tensor in the case dtype. Every tensor op is torch's own, so autograd,
rounding and the collectives' backward are the framework's; only what the
case language defines differently from torch is written out here (scalar
arithmetic in float64 with IEEE results instead of Python exceptions, the
one-element broadcasting rule, inputs rounded exactly as the C side does).

Failure: a program the language rejects raises CaseError (the oracle rejects
it first, so this means the two interpreters disagree); whatever torch
raises propagates unchanged, to be reported as the framework's refusal.
"""

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from collgrad_core.ir import Case, Node, position
from collgrad_core.scalar_ops import SCALAR_OPS
from collgrad_core.walk import Walk

from . import comm, kinds, ops
from .comm import Call

DTYPES = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16, "f16": torch.float16}

Value = Any  # float or torch.Tensor


class CaseError(Exception):
    """The program is not valid on this rank ("file:line:col: expected ...")."""


@dataclass
class Group:
    """A process group of the program (group(), mesh()): its members' global
    ranks, ascending, and the ProcessGroup every rank made for it."""

    members: List[int]
    pg: Any

    def index(self, rank: int) -> int:
        """rank's place in the group (torch's get_rank(group)), -1 outside."""
        return self.members.index(rank) if rank in self.members else -1


_TENSOR_OPS: Dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "+": torch.add, "-": torch.sub, "*": torch.mul, "/": torch.div, "**": torch.pow,
    "@": torch.matmul,
}


class Rank(Walk):
    """One rank's run of one case: the IR's walk (collgrad_core/walk.py) with
    torch's values and operations. `api` performs its communication calls;
    `on_stmt(phase, where)` is told before each statement runs (the status
    file and the report of where an exception happened use it)."""

    def __init__(self, case: Case, rank: int, world: int, api: comm.Api,
                 on_stmt: Optional[Callable[[str, str], None]] = None):
        super().__init__(case, world)
        self.device = api.device  # where every tensor the program makes lives (None: the CPU)
        self.rank = rank
        self.api = api
        self.dtype = DTYPES[case.dtype]
        self.env: Dict[str, torch.Tensor] = {}   # final bindings, in first-binding order
        self.groups: Dict[str, Group] = {}        # names bound to process groups
        self.made: List[torch.Tensor] = []       # every named tensor, for zero_grad()
        self.nonroot_outputs: set = set()        # ids of reduce/gather outputs off their root
        self.phase = "forward"
        self.on_stmt = on_stmt or (lambda phase, where: None)

    # ---- values ------------------------------------------------------------

    def fail(self, node: Node, message: str) -> CaseError:
        return CaseError(f"{position(self.case, node)}: {message} (rank {self.rank}, world {self.world})")

    def rounded(self, values: torch.Tensor) -> torch.Tensor:
        """float64 values in the case dtype, rounded as cg_round_to does
        (half types through float32: double rounding, like the C side), on
        the rank's device: every value a program makes passes through here."""
        if self.dtype in (torch.bfloat16, torch.float16):
            values = values.to(torch.float32)
        return values.to(device=self.device, dtype=self.dtype)

    def constant(self, v: float) -> torch.Tensor:
        return self.rounded(torch.tensor(v, dtype=torch.float64))

    def tensor(self, v: Value) -> torch.Tensor:
        return v if isinstance(v, torch.Tensor) else self.constant(v)

    def number(self, value: float) -> float:
        return value

    def rank_number(self) -> float:
        return float(self.rank)

    def is_tensor(self, v: Value) -> bool:
        return isinstance(v, torch.Tensor)

    def shape(self, t: torch.Tensor) -> List[int]:
        return list(t.shape)

    def rows(self, t: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
        return t[lo:hi]

    def scalar_map(self, v: float, fn: Callable[[float], float]) -> float:
        return fn(v)

    def negate(self, t: torch.Tensor) -> torch.Tensor:
        return torch.neg(t)

    def integer(self, v: Value, node: Node, what: str) -> int:
        """v as an integer: a number, or a one-element tensor without grad
        (rows = 16 / world), as cg_val_int accepts."""
        if isinstance(v, torch.Tensor):
            if v.numel() != 1 or v.requires_grad:
                raise self.fail(node, f"expected {what} (an integer), got a tensor")
            v = float(v.detach().reshape(-1)[0].to(torch.float64))
        if not math.isfinite(v) or v != math.floor(v) or abs(v) > 1e15:
            raise self.fail(node, f"expected {what} (an integer), got {v:g}")
        return int(v)

    # ---- statements ----------------------------------------------------------

    def on_block(self, st: Node) -> None:
        if self.is_member(st):
            self.stmts(st["body"])

    def is_member(self, st: Node) -> bool:
        """Does this rank run the body of `on r1, r2 { ... }` (or `on g`)?"""
        member = False
        for e in st["ranks"]:
            v = self.eval(e)
            if isinstance(v, Group):
                member |= self.rank in v.members
                continue
            r = self.integer(v, e, "a rank")
            if r < 0 or r >= self.world:
                raise self.fail(e, f"expected a rank in 0..{self.world - 1}, got {r}")
            member |= r == self.rank
        return member

    def bind(self, name: str, t: torch.Tensor) -> None:
        if t.requires_grad and t.grad_fn is not None:
            t.retain_grad()  # named tensors report their gradient
        self.env[name] = t
        self.made.append(t)

    def assign(self, st: Node) -> None:
        self.phase = "forward"
        self.on_stmt(self.phase, self.where)
        super().assign(st)

    def zero_grad(self, e: Node) -> None:
        self.phase = "forward"
        self.on_stmt(self.phase, self.where)
        for t in self.made:
            t.grad = None

    def backward(self, e: Node, root: Value) -> None:
        self.phase = "backward"
        self.on_stmt(self.phase, self.where)
        if not isinstance(root, torch.Tensor):
            raise self.fail(e["args"][0], "expected a tensor to call backward on, got a number")
        self.api.backward(root, self.where)
        self.phase = "forward"

    def send(self, e: Node, args: List[Value]) -> None:
        self.phase = "forward"
        self.on_stmt(self.phase, self.where)
        peer = self.integer(args[1], e["args"][1], "destination rank")
        if peer < 0 or peer >= self.world or peer == self.rank:
            raise self.fail(e["args"][1], f"expected a destination rank in 0..{self.world - 1} "
                                          f"other than {self.rank}, got {peer}")
        call = Call("send", int(e["seq"]), self.rank, self.world, self.case.event(int(e["seq"]), self.rank),
                    peer=peer)
        self.api.send(call, self.tensor(args[0]))

    # ---- process groups --------------------------------------------------------

    def make_groups(self, e: Node, names: List[str]) -> None:
        """g = group([ranks]) and tp, dp = mesh([A, B]) (the rows and columns
        of the world laid out row-major). Every rank makes every group in the
        same order, as torch.distributed.new_group requires."""
        if not self.api.groups:
            raise comm.Unsupported("process groups (group(), mesh())")
        spec = [self.integer(v, e, "a rank or a size") for v in
                self.tensor(self.eval(e["args"][0])).reshape(-1).tolist()]
        if e["name"] == "group":
            members = sorted(spec)
            self.groups[names[0]] = Group(members, self.api.new_group(members))
            return
        rows, cols = spec
        made = [Group([i * cols + j for j in range(cols)], None) for i in range(rows)]
        made += [Group([i * cols + j for i in range(rows)], None) for j in range(cols)]
        for g in made:
            g.pg = self.api.new_group(g.members)
        self.groups[names[0]] = made[self.rank // cols]
        self.groups[names[1]] = made[rows + self.rank % cols]

    # ---- expressions ---------------------------------------------------------

    def lookup(self, e: Node) -> Value:
        if e["name"] in self.groups:
            return self.groups[e["name"]]
        if e["name"] not in self.env:
            raise self.fail(e, f"expected '{e['name']}' to be defined on this rank, got no assignment to it here")
        return self.env[e["name"]]

    def ternary(self, e: Node) -> Value:
        c = self.eval(e["args"][0])
        if isinstance(c, torch.Tensor):
            raise self.fail(e["args"][0], "expected a number as condition, got a tensor")
        return self.eval(e["args"][1] if c != 0 else e["args"][2])

    def list_literal(self, e: Node) -> torch.Tensor:
        def collect(node: Node, depth: int, shape: List[int], leaves: List[float]) -> None:
            if node["kind"] != "list":
                if depth != len(shape):
                    raise self.fail(node, "expected a rectangular list, got a ragged one")
                v = self.eval(node)
                if isinstance(v, torch.Tensor):
                    raise self.fail(node, "expected a number in a list literal, got a tensor")
                leaves.append(v)
                return
            if depth == len(shape) and not leaves:
                shape.append(len(node["items"]))
            elif depth >= len(shape) or shape[depth] != len(node["items"]):
                raise self.fail(node, "expected a rectangular list, got a ragged one")
            for item in node["items"]:
                collect(item, depth + 1, shape, leaves)

        shape: List[int] = []
        leaves: List[float] = []
        collect(e, 0, shape, leaves)
        return self.rounded(torch.tensor(leaves, dtype=torch.float64).reshape(shape))

    def binary(self, e: Node) -> Value:
        op = e["op"]
        a, b = self.eval(e["args"][0]), self.eval(e["args"][1])
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor) and op != "@":
            return SCALAR_OPS[op](a, b)
        if op not in _TENSOR_OPS:
            raise self.fail(e, f"expected numbers on both sides of '{op}', got a tensor")
        ta, tb = self.tensor(a), self.tensor(b)
        if op != "@" and ta.shape != tb.shape:
            # the language broadcasts only an operand with one element, and the
            # result takes the other operand's shape
            if tb.numel() == 1 and ta.numel() != 1:
                tb = tb.reshape(())
            elif ta.numel() == 1 and tb.numel() != 1:
                ta = ta.reshape(())
        return _TENSOR_OPS[op](ta, tb)

    def index(self, e: Node) -> torch.Tensor:
        args = e["args"]
        t = self.eval(args[0])
        if not isinstance(t, torch.Tensor) or t.dim() == 0:
            what = "a 0-d tensor" if isinstance(t, torch.Tensor) else "a number"
            raise self.fail(e, f"expected a tensor with at least one dimension to index, got {what}")
        lo = self.integer(self.eval(args[1]), args[1], "an index") if len(args) > 1 and args[1] else 0
        if not e.get("slice"):
            if lo < -t.shape[0] or lo >= t.shape[0]:
                raise self.fail(e, f"expected index in [{-t.shape[0]}, {t.shape[0]}), got {lo}")
            return t[lo]
        hi = self.integer(self.eval(args[2]), args[2], "an index") if len(args) > 2 and args[2] else t.shape[0]
        return t[lo:hi]

    # ---- calls -----------------------------------------------------------------

    def group_call(self, e: Node) -> float:
        name = e["name"]
        if name in ("group", "mesh"):  # a group is made by an assignment only
            raise self.fail(e, f"expected a tensor function, got '{name}'")
        g = self.eval(e["args"][0])
        if not isinstance(g, Group):
            raise self.fail(e, f"expected a group in {name}(), got a value")
        return float(g.index(self.rank) if name == "group_rank" else len(g.members))

    def construct(self, e: Node, args: List[Value]) -> torch.Tensor:
        return ops.construct(self, e, args)

    def leaf(self, v: Value) -> torch.Tensor:
        return self.tensor(v).detach().clone().to(self.dtype).requires_grad_(True)

    def local_op(self, e: Node, op: Any, args: List[Value], kwargs: Dict[str, Value]) -> torch.Tensor:
        return ops.local_op(self, e, op, args, kwargs)

    # ---- communication -----------------------------------------------------------

    def communicate(self, e: Node) -> torch.Tensor:
        args, kwargs = self.arguments(e)
        groups = [v for v in list(args) + list(kwargs.values()) if isinstance(v, Group)]
        group = groups[0] if groups else None
        kind = e["name"]
        seq = int(e["seq"])
        if group is None:
            call = Call(kind, seq, self.rank, self.world, self.case.event(seq, self.rank))
        else:  # the call of a world of the group's size; roots stay global
            call = Call(kind, seq, group.index(self.rank), len(group.members),
                        self.case.event(seq, self.rank, group.members), group=group.pg)
        if call.event.kind != kind:
            raise self.fail(e, f"expected the plan's call #{seq} to be {kind}, got {call.event.kind}")
        nodes, kw = e["args"], e["kwargs"]

        def word(pos: int) -> str:
            node = nodes[pos] if len(nodes) > pos else kw.get("op")
            return node["name"] if node is not None else "sum"

        def rank_arg(pos: int) -> int:
            node = nodes[pos] if len(nodes) > pos else kw.get("root")
            return 0 if node is None else self.integer(self.eval(node), node, "root rank")

        if kind == "recv":
            call.peer = self.integer(args[0], nodes[0], "a source rank")
            return self.api.recv(call, self.dtype)
        row = self.case.collectives[kind]  # the tool's table says where op and root are
        if row.op is not None:
            call.op = word(row.op)
        if row.root is not None:
            call.src = rank_arg(row.root)
            call.root = call.src if group is None else group.index(call.src)
        if call.rank < 0:  # off the group: the API's own non-member call
            return self.api.nonmember(call, self.tensor(args[0]))
        y = kinds.method(self.api, kind)(call, self.tensor(args[0]))
        if row.root_only_output and call.rank != call.root:
            self.nonroot_outputs.add(id(y))
        return y

    # ---- results -------------------------------------------------------------------

    def bindings(self) -> List[Tuple[str, torch.Tensor, Optional[torch.Tensor]]]:
        """(name, value, gradient) of every final binding. The case language
        defines the outputs of reduce and gather off their root as carrying no
        gradient; PyTorch's outputs there are tensors in the graph (which is
        what makes those ranks take part in the backward), so whatever
        gradient reached them is not reported: the language has no such number."""
        return [(name, t, None if id(t) in self.nonroot_outputs else self.api.gradient(t))
                for name, t in self.env.items()]
