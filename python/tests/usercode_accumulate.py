"""A data-parallel step that accumulates over 2 microbatches without dividing
its loss by the count (issue 60 item 15): at W=2 the gradient is off by 2,
which is both the world size and the accumulation count."""

import torch
import torch.distributed as dist

import collgrad_torch as cg

MICROBATCHES = 2


def make_inputs(rank: int, world: int) -> dict:
    torch.manual_seed(0)   # one model on every rank
    w = torch.randn(3, dtype=torch.float64, requires_grad=True)
    g = torch.Generator().manual_seed(10 + rank)
    return {"w": cg.replicated(w), "batch": torch.randn(4, 3, dtype=torch.float64, generator=g)}


def accumulate_no_divide(rank: int, world: int, w: torch.Tensor, batch: torch.Tensor) -> float:
    total = 0.0
    for mb in batch.chunk(MICROBATCHES):
        loss = (mb @ w).pow(2).mean()          # the bug: not divided by MICROBATCHES before backward
        loss.backward()
        total += float(loss) / MICROBATCHES    # the step's loss: the mean over its microbatches
    dist.all_reduce(w.grad)
    w.grad /= world                            # DDP's average over ranks: right
    return total
