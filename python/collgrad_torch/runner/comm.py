"""What every API module shares: the description of one communication call,
the case language's block arithmetic (which rows of axis 0 a rank owns), and
the padding that lets ragged blocks travel through PyTorch's collectives,
which need every rank's tensor to have the same shape.

Padding is what a user with ragged data does: zero rows up to the largest
block, the collective, then a slice. Both are ordinary differentiable ops, so
the gradient of the padding is simply dropped and the collective's own
backward is what the run measures.
"""

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import torch

from collgrad_core.ir import PlanEvent


class Unsupported(Exception):
    """The API, at this torch version, has no way to express a call: the job
    is skipped with this reason (raised before anything runs)."""


class Unavailable(Exception):
    """The API cannot be used at all in this torch (funcol before 2.0):
    every job is skipped with this reason."""


@dataclass
class Call:
    """One communication call as the program wrote it, with the plan's view
    of it (every rank's input shape). On a process group, rank, world and
    root count in the group (the plan's view of a group call is that of a
    world of its size), `src` is the root as PyTorch takes it (a global
    rank) and `group` the group's ProcessGroup; rank is -1 off the group."""

    kind: str
    seq: int
    rank: int
    world: int
    event: PlanEvent
    op: str = "sum"      # all_reduce, reduce_scatter, reduce
    root: int = 0        # broadcast, reduce, gather, scatter
    peer: int = -1       # send: destination; recv: source
    src: int = 0         # the root as a global rank (PyTorch's src/dst argument)
    group: Any = None    # the call's ProcessGroup; None: the job's world group


def chunk_lo(n: int, world: int, r: int) -> int:
    """First row of rank r's balanced block of n rows (harness/collectives/comm.h)."""
    return (n * r) // world


def block_rows(n: int, world: int, r: int) -> int:
    return chunk_lo(n, world, r + 1) - chunk_lo(n, world, r)


def rows_of(shape: Sequence[int]) -> int:
    """Rows of a tensor of this shape; a 0-d tensor counts as one row."""
    return shape[0] if len(shape) > 0 else 1


def as_rows(x: torch.Tensor) -> torch.Tensor:
    """x with a first axis (a 0-d tensor becomes one row), as the C side views it."""
    return x.reshape(1) if x.dim() == 0 else x


def pad_rows(x: torch.Tensor, rows: int) -> torch.Tensor:
    """x (with a first axis) and zero rows up to `rows`; x itself when no padding is needed."""
    extra = rows - x.shape[0]
    if extra <= 0:
        return x
    return torch.cat([x, x.new_zeros((extra,) + tuple(x.shape[1:]))])


def blocks(x: torch.Tensor, world: int) -> List[torch.Tensor]:
    """x's first axis in `world` balanced blocks (slices, so differentiable)."""
    n = x.shape[0]
    return [x[chunk_lo(n, world, r):chunk_lo(n, world, r + 1)] for r in range(world)]


def call_blocks(call: Call, x: torch.Tensor) -> List[torch.Tensor]:
    """x's first axis in the call's blocks: by this rank's row of the call's
    explicit send_splits (reduce_scatter's, which every rank shares), else
    balanced."""
    if call.event.splits is None:
        return blocks(x, call.world)
    sizes = list(call.event.splits[call.rank])
    at = [sum(sizes[:r]) for r in range(call.world + 1)]
    return [x[at[r]:at[r + 1]] for r in range(call.world)]


def gathered_rows(call: Call) -> List[int]:
    """Rows every rank contributes to a gather (its input's first axis)."""
    return [rows_of(s) for s in call.event.shapes]


def reduce_op(op: str):
    """The c10d ReduceOp of a case-language op."""
    import torch.distributed as dist

    return {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "prod": dist.ReduceOp.PRODUCT,
            "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[op]


def concat_unpadded(parts: Sequence[torch.Tensor], rows: Sequence[int]) -> torch.Tensor:
    """cat of parts[r][:rows[r]]: the ragged result of a padded gather."""
    return torch.cat([p[:n] for p, n in zip(parts, rows)])


def empty_result(parts: Sequence[torch.Tensor]) -> torch.Tensor:
    """A zero-row result still connected to parts (a gather's non-root output:
    the case language's empty tensor, with the op in the graph as a user's
    code has it)."""
    return torch.cat([p[:0] for p in parts])


class Api:
    """One of PyTorch's distributed APIs, as the interpreter sees it: a
    method per communication kind taking the call and this rank's operand
    (tensors in the case dtype, already of the case's shapes). A kind the API
    lacks is named by `unsupported`, checked before a job runs."""

    name = "?"
    groups = False  # whether it runs programs with process groups (group(), mesh())
    timeout: Any = None  # a datetime.timedelta for the groups it makes (the job's collective timeout)
    device: Any = None  # the torch.device of the rank's tensors: None is the CPU (backend.device)

    def __init__(self, group, backend: str):
        self.group = group
        self.backend = backend

    def pg(self, call: Call):
        """The ProcessGroup call runs on: its group's, else the job's world."""
        return self.group if call.group is None else call.group

    def new_group(self, members: Sequence[int]):
        """A process group of `members` (global ranks), made by every rank in
        the same order, as torch.distributed.new_group requires."""
        import torch.distributed as dist

        if self.timeout is None:
            return dist.new_group(list(members))
        return dist.new_group(list(members), timeout=self.timeout)

    def nonmember(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        """A call on a group this rank is not in: what the API's function
        returns there (PyTorch: a no-op)."""
        raise Unsupported(f"{call.kind} off its group")

    def unsupported(self, kinds: Sequence[str]) -> Optional[str]:
        """Why this API cannot run a program using `kinds`, or None."""
        return None

    def finish(self) -> None:
        """Complete what the program left in flight (sends) before results leave."""

    def backward(self, t: torch.Tensor, where: str) -> None:
        """backward(t) at statement `where`: autograd from t, seeded with ones."""
        t.backward(torch.ones_like(t), retain_graph=True)

    def gradient(self, t: torch.Tensor) -> Optional[torch.Tensor]:
        """The gradient the backward left for t (None: none reached it)."""
        return t.grad

    # every kind; an API overrides those it has
    def all_reduce(self, call: Call, x: torch.Tensor) -> torch.Tensor: raise Unsupported(call.kind)
    def all_gather(self, call: Call, x: torch.Tensor) -> torch.Tensor: raise Unsupported(call.kind)
    def reduce_scatter(self, call: Call, x: torch.Tensor) -> torch.Tensor: raise Unsupported(call.kind)
    def broadcast(self, call: Call, x: torch.Tensor) -> torch.Tensor: raise Unsupported(call.kind)
    def reduce(self, call: Call, x: torch.Tensor) -> torch.Tensor: raise Unsupported(call.kind)
    def gather(self, call: Call, x: torch.Tensor) -> torch.Tensor: raise Unsupported(call.kind)
    def scatter(self, call: Call, x: torch.Tensor) -> torch.Tensor: raise Unsupported(call.kind)
    def all_to_all(self, call: Call, x: torch.Tensor) -> torch.Tensor: raise Unsupported(call.kind)
    def send(self, call: Call, x: torch.Tensor) -> None: raise Unsupported(call.kind)
    def recv(self, call: Call, dtype: torch.dtype) -> torch.Tensor: raise Unsupported(call.kind)


def covers_only(api: str, idiom: str, kinds: Sequence[str], allowed: Sequence[str]) -> Optional[str]:
    """Why an idiom API covering `allowed` only cannot run a program using
    `kinds` (None when it can): "pytorch:API covers ... (IDIOM); this case
    also uses ..."."""
    other = [k for k in kinds if k not in allowed]
    if not other:
        return None
    return f"pytorch:{api} covers {' and '.join(allowed)} only ({idiom}); this case also uses {', '.join(other)}"


def zero_nonroot(y: torch.Tensor, call: Call) -> torch.Tensor:
    """A reduce's output outside the root: the case language defines it as
    zeros. The values are cleared without autograd seeing it, so the graph is
    the one the API built (what a user's code holds on that rank)."""
    if call.rank != call.root:
        with torch.no_grad():
            y.zero_()
    return y


def scatter_shapes(call: Call) -> Tuple[int, Tuple[int, ...]]:
    """(rows of the largest block, shape of one padded block) of a scatter of
    the root's input."""
    root_shape = call.event.shapes[call.root]
    n = rows_of(root_shape)
    most = max(block_rows(n, call.world, r) for r in range(call.world))
    rest = tuple(root_shape[1:]) if len(root_shape) > 0 else ()
    return most, (most,) + rest


def all_to_all_splits(call: Call) -> Tuple[List[int], List[int]]:
    """(rows this rank sends to each rank, rows it receives from each)."""
    me, w = call.rank, call.world
    if call.event.splits is not None:  # the call's explicit splits
        return list(call.event.splits[me]), [call.event.splits[j][me] for j in range(w)]
    mine = rows_of(call.event.shapes[me])
    send = [block_rows(mine, w, j) for j in range(w)]
    recv = [block_rows(rows_of(call.event.shapes[j]), w, me) for j in range(w)]
    return send, recv
