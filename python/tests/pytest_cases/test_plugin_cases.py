"""What the collgrad pytest plugin does with tests that go wrong, run by
usercode_pytest.py in a session of its own: a wrong gradient fails with the
table, a function that raises and one that hangs are errors naming what
happened and the session goes on, a backend this machine lacks skips, and an
unmarked test is left alone."""

import os
import sys

import pytest
import torch
import torch.distributed as dist
import torch.distributed.nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "user_code"))
import seed_allreduce  # noqa: E402


def make_inputs(rank, world):
    return {"x": (torch.arange(3, dtype=torch.float64) + rank).requires_grad_()}


@pytest.mark.collgrad(world=[2], inputs=seed_allreduce.make_inputs)
def test_c10d_without_autograd(rank, world, x):
    return seed_allreduce.sum_c10d(rank, world, x)


@pytest.mark.collgrad(world=2, inputs="make_inputs")
def test_raises_on_rank_1(rank, world, x):
    if rank == 1:
        raise ValueError("rank 1 does not like its input")
    return torch.distributed.nn.all_reduce(x).sum()


@pytest.mark.collgrad(world=[2], inputs=make_inputs, timeout=3)
def test_hangs(rank, world, x):
    if rank == 0:
        return torch.distributed.nn.all_reduce(x).sum()  # rank 1 never joins this one
    return x.sum()


@pytest.mark.collgrad(world=[2], inputs=make_inputs)
def test_after_the_hang(rank, world, x):
    return torch.distributed.nn.all_reduce(x * x).sum()


@pytest.mark.collgrad(world=[2], inputs=make_inputs, backend="nccl")
def test_over_nccl(rank, world, x):
    return torch.distributed.nn.all_reduce(x).sum()


def test_unmarked():
    assert dist.is_available()
