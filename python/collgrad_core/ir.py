"""The exported IR (schema collgrad-check/ir/1, python/schema/ir-1.schema.json).

The C parser is the only parser of the case language; this module only reads
its JSON. Expressions and statements stay the plain dicts of the document
(``kind``, ``at``, ...), which the interpreter walks; the case header and the
plan are lifted into small classes.
"""

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

SCHEMA = "collgrad-check/ir/1"

Node = Dict[str, Any]


class IRError(Exception):
    """The document is not an IR this package can run."""


@dataclass(frozen=True)
class Collective:
    """A row of the tool's table of collectives, as the document carries it:
    where a call's op and root are among its arguments (None: it takes none),
    whether it pairs two ranks, whether only the root's output counts."""

    name: str
    op: Optional[int]
    root: Optional[int]
    p2p: bool
    root_only_output: bool


@dataclass(frozen=True)
class Op:
    """A row of the tool's table of tensor functions (harness/lang/op_table.h):
    how it is called (``cls``: ctor, leaf, unary, binary, axis, axis_last,
    call) and what a generator must respect (shape rule, domain, diff)."""

    name: str
    cls: str
    min_args: int
    max_args: int
    keyword: Optional[str]
    shape: str
    domain: str
    diff: str


@dataclass
class PlanEvent:
    """One communication call at the plan's world: every rank's input shape
    (send/recv: the message's), the issuing rank of a send/recv (-1 for a
    collective) and the tag that matches a recv to its send."""

    seq: int
    kind: str
    rank: int
    tag: int
    shapes: List[Tuple[int, ...]]
    splits: Optional[List[List[int]]] = None  # explicit row splits, row j rank j's; None: balanced
    members: Optional[List[int]] = None  # a process group's call: its members' global ranks; None: the world


@dataclass
class Case:
    name: str
    file: str
    dtype: str
    seed: int
    program: List[Node]
    plan: List[PlanEvent] = field(default_factory=list)
    collectives: Dict[str, Collective] = field(default_factory=dict)  # the document's table
    ops: Dict[str, Op] = field(default_factory=dict)  # the document's table of tensor functions
    jax: Dict[str, str] = field(default_factory=dict)  # the case's `jax` line: {"all_gather": "invarying", ...}

    def event(self, seq: int, rank: int, members: Optional[List[int]] = None) -> PlanEvent:
        """The plan's event for communication call `seq` as `rank` issues it;
        on a process group, that group's (`members`: a mesh's statement makes
        one event per group), which a non-member asks for by its members."""
        for ev in self.plan:
            if ev.seq != seq or (ev.rank >= 0 and ev.rank != rank):
                continue
            if members is None or ev.members is None or ev.members == list(members):
                return ev
        raise IRError(f"{self.name}: the plan holds no communication call #{seq} for rank {rank}")

    def makes_groups(self) -> bool:
        """Whether the program makes process groups (group(), mesh())."""
        return self.calls("group", "mesh")

    def calls(self, *names: str) -> bool:
        """Whether the program calls any of `names` (a function or a statement)."""

        def walk(node: Any) -> bool:
            if isinstance(node, dict):
                if node.get("kind") == "call" and node.get("name") in names:
                    return True
                return any(walk(v) for v in node.values())
            if isinstance(node, list):
                return any(walk(v) for v in node)
            return False

        return walk(self.program)

    def kinds(self) -> List[str]:
        """The communication kinds the program uses, in plan order, once each."""
        seen: List[str] = []
        for ev in self.plan:
            if ev.kind not in seen:
                seen.append(ev.kind)
        return seen


@dataclass
class Document:
    world: Optional[int]
    cases: List[Case]
    collectives: Dict[str, Collective] = field(default_factory=dict)
    ops: Dict[str, Op] = field(default_factory=dict)


def _index(v: Any) -> Optional[int]:
    return None if v is None else int(v)


def _collectives(obj: Any) -> Dict[str, Collective]:
    try:
        return {str(name): Collective(str(name), _index(c["op"]), _index(c["root"]), bool(c["p2p"]),
                                      bool(c["root_only_output"]))
                for name, c in obj.items()}
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise IRError(f"the IR's table of collectives is malformed: {type(e).__name__}: {e}") from None


def _ops(obj: Any) -> Dict[str, Op]:
    try:
        return {str(name): Op(str(name), str(o["class"]), int(o["min_args"]), int(o["max_args"]),
                              None if o["keyword"] is None else str(o["keyword"]), str(o["shape"]),
                              str(o["domain"]), str(o["diff"]))
                for name, o in obj.items()}
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise IRError(f"the IR's table of ops is malformed: {type(e).__name__}: {e}") from None


def _case(obj: Dict[str, Any], table: Dict[str, Collective], ops: Dict[str, Op]) -> Case:
    try:
        plan = [PlanEvent(int(e["seq"]), str(e["kind"]), int(e["rank"]), int(e["tag"]),
                          [tuple(int(d) for d in s) for s in e["shapes"]],
                          [[int(n) for n in row] for row in e["splits"]] if "splits" in e else None,
                          [int(m) for m in e["members"]] if "members" in e else None)
                for e in obj.get("plan", [])]
        case = Case(name=str(obj["name"]), file=str(obj.get("file") or obj["name"]),
                    dtype=str(obj["dtype"]), seed=int(obj["seed"]), program=list(obj["program"]),
                    plan=plan, collectives=table, ops=ops,
                    jax={str(k): str(v) for k, v in dict(obj.get("jax") or {}).items()})
    except (KeyError, TypeError, ValueError) as e:
        raise IRError(f"a case in the IR is malformed: {type(e).__name__}: {e}") from None
    unknown = [k for k in case.kinds() if k not in table]
    if unknown:
        raise IRError(f"{case.name}: the plan calls {unknown[0]}, which the IR's table of collectives lacks")
    return case


def parse(text: str) -> Document:
    """The document in `text`; IRError when it is not JSON or not this schema."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise IRError(f"not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise IRError(f"expected schema {SCHEMA}, got {got!r}")
    if not isinstance(doc.get("cases"), list):
        raise IRError("expected a list of cases")
    world = doc.get("world")
    table = _collectives(doc.get("collectives"))
    ops = _ops(doc.get("ops"))
    return Document(world=int(world) if world is not None else None,
                    cases=[_case(c, table, ops) for c in doc["cases"]], collectives=table, ops=ops)


def load(path: str) -> Document:
    with open(path, encoding="utf-8") as f:
        return parse(f.read())


def load_for(path: str, missing: Callable[[Dict[str, "Op"]], List[str]],
             runner: str) -> Tuple[Optional[Document], str]:
    """The document at path for a runner whose table of ops `missing` reads
    (the names it has no entry for): (the document, "") or (None, the one
    line that says why not, its file named: a usage error of the run)."""
    try:
        doc = load(path)
    except (OSError, IRError) as e:
        return None, f"{path}: {e}"
    lacking = missing(doc.ops)
    if lacking:
        return None, (f"{path}: {runner} has no entry for the tool's op(s) {', '.join(lacking)}: install the "
                      "package of the same tool version")
    return doc, ""


def position(case: Case, node: Node) -> str:
    """"file:line:col" of a node, for messages."""
    at = node.get("at") or [0, 0]
    return f"{case.file}:{at[0]}:{at[1]}"
