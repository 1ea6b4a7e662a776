"""pytorch #58005 (seeds/002), the PRODUCT snippet, as its author wrote it.

Each rank holds x = 1 and computes xx = (rank + 2) x; all_reduce PRODUCT makes
xx = 6 on both ranks at W=2; y = (rank + 2) xx. The global loss is
sum_k y_k = 5 * 2 x_0 * 3 x_1, so the per-rank truth is 30 and 30.
torch.distributed.nn's backward all-reduces the gradients with the forward's
op (PRODUCT) and gives 12 and 18 -- which is each rank's own loss's gradient
(d y_0/d x_0 = 12, d y_1/d x_1 = 18): the other rank's loss is dropped.
"""

import torch
import torch.distributed as dist
import torch.distributed.nn


def make_inputs(rank: int, world: int) -> dict:
    return {"x": torch.ones(1, requires_grad=True)}


def product_nn(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    xx = (rank + 2) * x
    xx = torch.distributed.nn.all_reduce(xx, op=dist.ReduceOp.PRODUCT)
    y = (rank + 2) * xx
    return y.sum()
