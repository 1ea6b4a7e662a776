"""Megatron-LM style tensor parallelism, written as its users write it: hand-made
autograd.Functions around c10d collectives (megatron/core/tensor_parallel/mappings.py).

    copy_to      forward identity,   backward all_reduce    (enter a column-parallel layer)
    reduce_from  forward all_reduce, backward identity      (leave a row-parallel layer)

A column-parallel linear (W1 split by output column) feeds a row-parallel one (W2 split
by input row). Every rank ends with the same output and the same loss: Megatron's
gradients are those of that one loss, so these are checked with semantics="replicated"
(d L_0 / d x; the input X is one replicated tensor).

- tp_mlp: right.
- tp_mlp_identity_backward: copy_to whose backward forgot the all_reduce: each rank's
  X.grad holds only its own shard's part (the parts sum to the truth).
- tp_mlp_discarded_copy: copy_to's backward all-reduces grad.contiguous(), a copy it then
  drops, and returns the unreduced grad (the same partial gradient, silently).

Sequence parallelism (megatron/core/tensor_parallel/mappings.py, the sequence-parallel
regions): X is split along the sequence, all-gathered before the column-parallel layer
(backward: reduce_scatter) and reduce-scattered after the row-parallel one (backward:
all_gather). Each rank's loss covers its own sequence shard, so the global loss is the sum:
per-rank semantics.

- sp_mlp: right.
- sp_mlp_double_reduce: the gather's backward reduce-scatters a gradient that was already
  all-reduced (the shape of Megatron-LM #7452): X.grad is W times the truth.
"""

import torch
import torch.distributed as dist

import collgrad_torch as cg

D, H, S = 3, 4, 2   # model width, hidden width per rank, sequence rows per rank


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def make_inputs(rank: int, world: int) -> dict:
    x = torch.randn(S, D, generator=_gen(1))                 # the same on every rank
    return {"x": cg.replicated(x.requires_grad_()),
            "w1": torch.randn(D, H, generator=_gen(10 + rank)).requires_grad_(),
            "w2": torch.randn(H, D, generator=_gen(20 + rank)).requires_grad_()}


def make_sp_inputs(rank: int, world: int) -> dict:
    return {"x": torch.randn(S, D, generator=_gen(30 + rank)).requires_grad_(),
            "w1": torch.randn(D, H, generator=_gen(10 + rank)).requires_grad_(),
            "w2": torch.randn(H, D, generator=_gen(20 + rank)).requires_grad_()}


class CopyTo(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return x

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        g = g.clone()
        dist.all_reduce(g)
        return g


class CopyToIdentityBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return x

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return g


class CopyToDiscardedCopy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return x

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        dist.all_reduce(g.t().contiguous())  # reduces a temporary copy
        return g


class ReduceFrom(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        x = x.clone()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return g


def _mlp(copy: type, x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(copy.apply(x) @ w1)          # column-parallel: this rank's hidden columns
    y = ReduceFrom.apply(h @ w2)                 # row-parallel: partial sums, all-reduced
    return (y * y).sum()


def tp_mlp(rank: int, world: int, x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return _mlp(CopyTo, x, w1, w2)


def tp_mlp_identity_backward(rank: int, world: int, x: torch.Tensor, w1: torch.Tensor,
                             w2: torch.Tensor) -> torch.Tensor:
    return _mlp(CopyToIdentityBackward, x, w1, w2)


def tp_mlp_discarded_copy(rank: int, world: int, x: torch.Tensor, w1: torch.Tensor,
                          w2: torch.Tensor) -> torch.Tensor:
    return _mlp(CopyToDiscardedCopy, x, w1, w2)


class GatherSeq(torch.autograd.Function):
    """all_gather along the sequence; backward reduce_scatter (sum) to the owner."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, x.contiguous())
        return torch.cat(parts)

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return _reduce_scatter_rows(g)


class GatherSeqDoubleReduce(GatherSeq):
    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        g = g.clone()
        dist.all_reduce(g)            # already reduced ...
        return _reduce_scatter_rows(g)  # ... and reduced again


class ScatterSeq(torch.autograd.Function):
    """reduce_scatter along the sequence; backward all_gather."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return _reduce_scatter_rows(x)

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        parts = [torch.empty_like(g) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, g.contiguous())
        return torch.cat(parts)


def _reduce_scatter_rows(x: torch.Tensor) -> torch.Tensor:
    """Sum over ranks, this rank's block of rows (all_reduce then slice: gloo in torch
    1.13 has no reduce_scatter)."""
    x = x.clone()
    dist.all_reduce(x)
    return x.chunk(dist.get_world_size())[dist.get_rank()].clone()


def _sp(gather: type, x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(gather.apply(x) @ w1)
    y = ScatterSeq.apply(h @ w2)
    return (y * y).sum()


def sp_mlp(rank: int, world: int, x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return _sp(GatherSeq, x, w1, w2)


def sp_mlp_double_reduce(rank: int, world: int, x: torch.Tensor, w1: torch.Tensor,
                         w2: torch.Tensor) -> torch.Tensor:
    return _sp(GatherSeqDoubleReduce, x, w1, w2)
