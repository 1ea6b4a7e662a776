"""A subgroup made with new_group: ranks pair up ([0, 1], [2, 3], ...; one group at W=2)
and all-reduce within their pair through torch.distributed.nn (autograd-aware).

- pair_all_reduce: right in torch 1.13 and 2.x.
- pair_all_reduce_twice: a hand-written Function that reduces the gradient twice: x the
  pair's size.

Rank r's loss is (r + 1) * sum(s^2) with s = sum over its pair of (k + 1) x_k, so the
per-rank truth for x_r is sum over the pair's members k of (k + 1) * 2 s (r + 1): only the
pair's losses depend on x_r.

Data parallelism inside each pair (make_pair_dp_inputs): each pair trains its own weight w,
held by the pair's two ranks (cg.replicated(w, group=pair)), each rank on its own data x_r,
with L_r = (r + 1) * sum((x_r * w)^2). The pair's w is one logical tensor, and its truth is
sum over the pair's members k of (k + 1) * 2 x_k^2 w.

- pair_dp_step: backward, then all_reduce(w.grad, group=pair): right.
- pair_dp_step_no_sync: the all_reduce forgotten: the pair's copies diverge, each its own
  rank's part of the truth ("replicas diverge", "partial").
"""

import torch
import torch.distributed as dist
import torch.distributed.nn


def make_inputs(rank: int, world: int) -> dict:
    return {"x": (torch.arange(3, dtype=torch.float64) + rank).requires_grad_()}


def pairs(world: int) -> list:
    # every rank makes every group, in the same order (new_group's contract)
    return [dist.new_group([i, i + 1]) for i in range(0, world - 1, 2)]


def pair_all_reduce(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    group = pairs(world)[rank // 2]
    s = torch.distributed.nn.all_reduce((rank + 1) * x, group=group)
    return (rank + 1) * (s * s).sum()


class _PairSumTwice(torch.autograd.Function):
    """all_reduce SUM over a group whose backward all-reduces the gradient twice:
    after the first, every member holds the same sum, so the second multiplies it
    by the group's size."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, group: object) -> torch.Tensor:  # type: ignore[override]
        ctx.group = group
        x = x.clone()
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, g: torch.Tensor):  # type: ignore[override]
        g = g.clone()
        dist.all_reduce(g, group=ctx.group)
        dist.all_reduce(g, group=ctx.group)
        return g, None


def pair_all_reduce_twice(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    """The same program as pair_all_reduce with that Function: x 2 (the pair's size;
    at W=2 the pair is the world)."""
    group = pairs(world)[rank // 2]
    s = _PairSumTwice.apply((rank + 1) * x, group)
    return (rank + 1) * (s * s).sum()


def make_pair_dp_inputs(rank: int, world: int) -> dict:
    import collgrad_torch as cg

    pair = pairs(world)[rank // 2]
    w = torch.tensor([0.5, -1.0, 1.5], dtype=torch.float64, requires_grad=True)  # alike in a pair
    return {"w": cg.replicated(w, group=pair), "x": torch.arange(3, dtype=torch.float64) + rank, "pair": pair}


def pair_dp_step(rank: int, world: int, w: torch.Tensor, x: torch.Tensor, pair: object) -> torch.Tensor:
    loss = (rank + 1) * ((x * w) ** 2).sum()
    loss.backward()
    dist.all_reduce(w.grad, group=pair)
    return loss


def pair_dp_step_no_sync(rank: int, world: int, w: torch.Tensor, x: torch.Tensor, pair: object) -> torch.Tensor:
    loss = (rank + 1) * ((x * w) ** 2).sum()
    loss.backward()
    return loss
