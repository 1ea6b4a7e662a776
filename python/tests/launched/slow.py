"""A correct function slow enough to kill a node in the middle of its check
(usercode_launched.py NodeLoss): each call marks $COLLGRAD_TEST_MARK, then sleeps."""

import os
import time

import torch
import torch.distributed as dist


def make_inputs(rank: int, world: int) -> dict:
    return {"x": torch.randn(8, requires_grad=True)}


def slow_sum(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    with open(os.path.join(os.environ["COLLGRAD_TEST_MARK"], f"rank{rank}"), "w", encoding="ascii"):
        pass
    time.sleep(0.3)
    y = x.clone()
    dist.all_reduce(y)   # no autograd through it: wrong, and never judged (the node dies first)
    return y.sum()


def raises_on_1(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    if rank == 1:
        raise TypeError("planted on rank 1")
    return (x * x).sum()
