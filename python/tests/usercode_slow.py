"""Slow user code, for the signal tests (issue 60 item 3): a long first
forward (the analytic pass), then slow finite differences."""

import itertools
import time

import torch
import torch.distributed.nn

_calls = itertools.count()


def make_inputs(rank: int, world: int) -> dict:
    return {"x": (torch.arange(8, dtype=torch.float64) + rank).requires_grad_()}


def slow(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    time.sleep(4.0 if next(_calls) == 0 else 0.2)
    return torch.distributed.nn.all_reduce(x * x).sum()


def hangs(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    if rank == 0:   # rank 1 never joins this all_reduce
        return torch.distributed.nn.all_reduce(x).sum()
    return x.sum()
