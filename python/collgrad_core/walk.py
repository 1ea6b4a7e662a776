"""One walk of a case program's IR for the interpreters outside the C tool
(collgrad_torch/runner/interp.py: one rank per process, torch tensors;
collgrad_jax/runner/program.py: every device at once inside a shard_map).

The walk is the language's (docs/case-language.md; the C twin is
harness/interp/interp*.c): which statement runs, how an assignment binds
one name or splits a tensor over several, which calls are statements, how
an expression is taken apart and what is a wrong program. What a value is
and what an operation does is the framework's: a subclass supplies them as
the methods below marked "the framework's", its table of operations.
Failure: a program the language rejects raises what fail() makes
("file:line:col: expected ..."; the oracle rejects such a program first,
so this means the interpreters disagree)."""

from typing import Any, Dict, List, Sequence

from .ir import Case, Node, position

STATEMENTS = ("backward", "zero_grad", "send")
GROUP_CALLS = ("group", "mesh", "group_rank", "group_size")


class Walk:
    """The statements and expressions of `case` at world size `world`."""

    def __init__(self, case: Case, world: int):
        self.case, self.world = case, world
        self.where = case.file   # the statement running ("file:line:col"), for reports

    # ---- the framework's -------------------------------------------------------

    def fail(self, node: Node, message: str) -> Exception:
        raise NotImplementedError

    def number(self, value: float) -> Any:
        """A number every rank has alike (a literal, the world size)."""
        raise NotImplementedError

    def rank_number(self) -> Any:
        """The `rank` of the program: this rank's, or each device's."""
        raise NotImplementedError

    def is_tensor(self, v: Any) -> bool:
        raise NotImplementedError

    def tensor(self, v: Any) -> Any:
        """v as a tensor (a number becomes one in the case dtype)."""
        raise NotImplementedError

    def shape(self, t: Any) -> Sequence[int]:
        raise NotImplementedError

    def rows(self, t: Any, lo: int, hi: int) -> Any:
        """t[lo:hi] along the first dimension (a split assignment's part)."""
        raise NotImplementedError

    def scalar_map(self, v: Any, fn: Any) -> Any:
        """fn applied to a number (per device where numbers are)."""
        raise NotImplementedError

    def negate(self, t: Any) -> Any:
        raise NotImplementedError

    def bind(self, name: str, t: Any) -> None:
        raise NotImplementedError

    def lookup(self, e: Node) -> Any:
        """The value a name holds here (fail where it has none)."""
        raise NotImplementedError

    def on_block(self, st: Node) -> None:
        """`on r1, r2 { ... }`: run the body where it runs."""
        raise NotImplementedError

    def make_groups(self, e: Node, names: List[str]) -> None:
        raise NotImplementedError

    def group_call(self, e: Node) -> Any:
        """group_rank(g) and group_size(g)."""
        raise NotImplementedError

    def zero_grad(self, e: Node) -> None:
        raise NotImplementedError

    def backward(self, e: Node, root: Any) -> None:
        raise NotImplementedError

    def send(self, e: Node, args: List[Any]) -> None:
        raise NotImplementedError

    def communicate(self, e: Node) -> Any:
        """A numbered communication call (e["seq"]): the collective, or recv."""
        raise NotImplementedError

    def list_literal(self, e: Node) -> Any:
        raise NotImplementedError

    def binary(self, e: Node) -> Any:
        raise NotImplementedError

    def ternary(self, e: Node) -> Any:
        raise NotImplementedError

    def index(self, e: Node) -> Any:
        raise NotImplementedError

    def construct(self, e: Node, args: List[Any]) -> Any:
        """A constructor (ones, randn, ...)."""
        raise NotImplementedError

    def leaf(self, v: Any) -> Any:
        """param(v): a new leaf that requires a gradient."""
        raise NotImplementedError

    def local_op(self, e: Node, op: Any, args: List[Any], kwargs: Dict[str, Any]) -> Any:
        raise NotImplementedError

    # ---- statements --------------------------------------------------------------

    def run(self) -> None:
        self.stmts(self.case.program)

    def stmts(self, stmts: List[Node]) -> None:
        for st in stmts:
            self.where = position(self.case, st)
            kind = st["kind"]
            if kind == "assign":
                self.assign(st)
            elif kind == "call":
                self.call_stmt(st)
            else:
                self.on_block(st)

    def assign(self, st: Node) -> None:
        names, expr = st["names"], st["expr"]
        if expr["kind"] == "call" and expr["name"] in ("group", "mesh"):
            self.make_groups(expr, names)
            return
        t = self.tensor(self.eval(expr))
        if len(names) == 1:
            self.bind(names[0], t)
            return
        shape = self.shape(t)
        if not shape or shape[0] % len(names) != 0:
            raise self.fail(st, f"expected a tensor whose first dimension splits into {len(names)} "
                                f"equal parts, got shape {list(shape)}")
        part = shape[0] // len(names)
        for k, name in enumerate(names):
            self.bind(name, self.rows(t, k * part, (k + 1) * part))

    def call_stmt(self, st: Node) -> None:
        e = st["expr"]
        name = e["name"]
        if name not in STATEMENTS:
            raise self.fail(e, f"expected backward, zero_grad or send, got '{name}'")
        if name == "zero_grad":
            self.zero_grad(e)
            return
        args = [self.eval(a) for a in e["args"]]
        if name == "backward":
            self.backward(e, args[0])
        else:
            self.send(e, args)

    # ---- expressions ----------------------------------------------------------------

    def eval(self, e: Node) -> Any:
        kind = e["kind"]
        if kind == "num":
            return self.number(float(e["value"]))
        if kind == "rank":
            return self.rank_number()
        if kind == "world":
            return self.number(float(self.world))
        if kind == "name":
            return self.lookup(e)
        if kind == "list":
            return self.list_literal(e)
        if kind == "unary":
            v = self.eval(e["args"][0])
            if not self.is_tensor(v):
                return self.scalar_map(v, (lambda a: float(a == 0)) if e["op"] == "!" else (lambda a: -a))
            if e["op"] == "!":
                raise self.fail(e, "expected a number after '!', got a tensor")
            return self.negate(v)
        if kind == "binary":
            return self.binary(e)
        if kind == "ternary":
            return self.ternary(e)
        if kind == "index":
            return self.index(e)
        if kind == "call":
            return self.call(e)
        raise self.fail(e, f"expected a tensor or a number, got {kind} '{e.get('name', '')}'")

    def arguments(self, e: Node) -> "tuple[List[Any], Dict[str, Any]]":
        """A call's arguments and keywords, evaluated (a word, such as sum, is None)."""
        args = [None if a["kind"] == "word" else self.eval(a) for a in e["args"]]
        kwargs = {k: (None if a["kind"] == "word" else self.eval(a)) for k, a in e["kwargs"].items()}
        return args, kwargs

    def call(self, e: Node) -> Any:
        name = e["name"]
        if name in STATEMENTS:
            raise self.fail(e, f"expected an expression, got statement {name}()")
        if name in GROUP_CALLS:
            return self.group_call(e)
        if "seq" in e:
            return self.communicate(e)
        args, kwargs = self.arguments(e)
        op = self.case.ops.get(name)
        if op is None:
            raise self.fail(e, f"expected a tensor function, got '{name}'")
        if op.cls == "ctor":
            return self.construct(e, args)
        if op.cls == "leaf":
            return self.leaf(args[0])
        return self.local_op(e, op, args, kwargs)
