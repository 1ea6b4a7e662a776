"""Data parallelism: the user's own training step, checked with step= and reduction="mean".

The model is replicated (one logical parameter set, every rank a copy); each rank has
its own batch. The gradient data parallelism promises is that of the mean of the ranks'
losses, on every rank.

- ddp_step: DistributedDataParallel averages the gradients: right with reduction="mean".
- allreduce_step_no_divide: a hand-written gradient sync that all-reduces .grad and
  forgets to divide by the world: W x the truth.
"""

from typing import Dict

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import collgrad_torch as cg

_ddp: Dict[int, DistributedDataParallel] = {}


def make_inputs(rank: int, world: int) -> dict:
    torch.manual_seed(0)                       # the same model on every rank
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    g = torch.Generator().manual_seed(50 + rank)
    return {"model": cg.replicated(model), "batch": torch.randn(5, 3, generator=g)}


def ddp_step(rank: int, world: int, model: torch.nn.Module, batch: torch.Tensor) -> torch.Tensor:
    ddp = _ddp.get(id(model))
    if ddp is None:                             # wrap once: the check calls the step many times
        ddp = _ddp[id(model)] = DistributedDataParallel(model)
    loss = (ddp(batch) ** 2).mean()
    loss.backward()
    return loss


def allreduce_step_no_divide(rank: int, world: int, model: torch.nn.Module, batch: torch.Tensor) -> torch.Tensor:
    loss = (model(batch) ** 2).mean()
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)                # sums; the mean needs / world
    return loss
