"""pytorch #58005 (seeds/002_fe13a50d78b2a57b.txt): the all_reduce snippets, as their authors wrote them.

Every rank holds x = 1 and makes xx = (rank + 2) x.

- sum_nn / sum_c10d, the thread's first snippet: S = all_reduce SUM(xx) (5 at W=2),
  loss = S^2. Every rank's loss is the same function, so the per-rank truth is
  d(sum_k S^2)/d x_r = W 2 S (r + 2): 40 and 60 at W=2. torch.distributed.nn gets it;
  the plain c10d all_reduce has no autograd formula (the in-place result is a
  constant to autograd, the gradient takes the local path) and gives 20 and 30: right
  under replicated semantics only, which is the thread's whole argument.
- product_nn, the PRODUCT snippet: xx = all_reduce PRODUCT(xx), y = (rank + 2) xx.
  The global loss is sum_k (k + 2) prod_j (j + 2) x_j: 5 * 6 = 30 and 30 at W=2.
  torch.distributed.nn's backward all-reduces the gradients with PRODUCT and gives
  12 and 18, each rank's own loss's gradient (the thread's numbers).
"""

import torch
import torch.distributed as dist
import torch.distributed.nn


def make_inputs(rank: int, world: int) -> dict:
    return {"x": torch.ones(1, requires_grad=True)}


def sum_nn(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    xx = (rank + 2) * x
    s = torch.distributed.nn.all_reduce(xx)
    return (s * s).sum()


def sum_c10d(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    xx = (rank + 2) * x
    dist.all_reduce(xx)  # in place, no autograd formula
    return (xx * xx).sum()


def product_nn(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    xx = (rank + 2) * x
    xx = torch.distributed.nn.all_reduce(xx, op=dist.ReduceOp.PRODUCT)
    y = (rank + 2) * xx
    return y.sum()
