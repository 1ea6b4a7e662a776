"""The all_gather product of the Chinese blog post (seeds/003_4cd569e96945749d.txt), three ways.

Rank 0 holds y = 1 + 2 = 3 (a 2x2 block), every other rank y = 0 + 2 = 2; each rank
gathers z = y * y and computes out = mean(z_0 * z_1). Every rank's loss is that
same function, so the per-rank truth is W d out/d y_r: at W=2, 2 * (1/4) * 2 y_0 z_1
= 12 on rank 0 and 2 * (1/4) * 2 y_1 z_0 = 18 on rank 1.

- blog_gatherlayer: the post's GatherLayer, whose backward keeps only this rank's slot
  of this rank's gradient; it prints 6 and 9 (the post's numbers): every other rank's
  loss is dropped.
- simclr_gatherlayer: SimCLR's GatherLayer as fixed later (all-reduce the slots'
  gradients, then take the own slot): right.
- diffdist_gather: ag14774/diffdist's all_gather backward, one reduce to each owner:
  right.
"""

from typing import Tuple

import torch
import torch.distributed as dist


def make_inputs(rank: int, world: int) -> dict:
    base = torch.ones(2, 2) if rank == 0 else torch.zeros(2, 2)
    return {"y": (base + 2).requires_grad_()}


class BlogGatherLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: torch.Tensor) -> Tuple[torch.Tensor, ...]:  # type: ignore[override]
        ctx.save_for_backward(input)
        output = [torch.zeros_like(input) for _ in range(dist.get_world_size())]
        dist.all_gather(output, input)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        (input,) = ctx.saved_tensors
        grad_out = torch.zeros_like(input)
        grad_out[:] = grads[dist.get_rank()]
        return grad_out


class SimCLRGatherLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: torch.Tensor) -> Tuple[torch.Tensor, ...]:  # type: ignore[override]
        output = [torch.zeros_like(input) for _ in range(dist.get_world_size())]
        dist.all_gather(output, input)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        all_gradients = torch.stack(grads)
        dist.all_reduce(all_gradients)
        return all_gradients[dist.get_rank()]


class DiffdistGather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: torch.Tensor) -> Tuple[torch.Tensor, ...]:  # type: ignore[override]
        output = [torch.zeros_like(input) for _ in range(dist.get_world_size())]
        dist.all_gather(output, input)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        mine = None
        for i, g in enumerate(grads):
            g = g.contiguous().clone()
            dist.reduce(g, dst=i)
            if i == dist.get_rank():
                mine = g
        return mine


def _product(z_gather: Tuple[torch.Tensor, ...]) -> torch.Tensor:
    return (z_gather[0] * z_gather[1]).mean()


def blog_gatherlayer(rank: int, world: int, y: torch.Tensor) -> torch.Tensor:
    return _product(BlogGatherLayer.apply(y * y))


def simclr_gatherlayer(rank: int, world: int, y: torch.Tensor) -> torch.Tensor:
    return _product(SimCLRGatherLayer.apply(y * y))


def diffdist_gather(rank: int, world: int, y: torch.Tensor) -> torch.Tensor:
    return _product(DiffdistGather.apply(y * y))
