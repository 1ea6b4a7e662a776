"""Marked tests that cannot be checked as written (usercode_pytest.py): each
fails with one line saying why, before any rank starts."""

import pytest
import torch


def make_inputs(rank: int, world: int) -> dict:
    return {"x": torch.ones(2, dtype=torch.float64, requires_grad=True)}


@pytest.mark.collgrad(world=[2], inputs=make_inputs, bogus=3)
def test_unknown_keyword(rank, world, x):
    return x.sum()


@pytest.mark.collgrad(world=[0], inputs=make_inputs)
def test_world_zero(rank, world, x):
    return x.sum()


@pytest.mark.collgrad(world=[2], inputs=make_inputs, atol=-1)
def test_negative_atol(rank, world, x):
    return x.sum()


@pytest.mark.collgrad(world=[2], inputs="no_such_function")
def test_inputs_not_there(rank, world, x):
    return x.sum()


class TestInAClass:
    @pytest.mark.collgrad(world=[2], inputs=make_inputs)
    def test_method(self, rank, world, x):
        return x.sum()


@pytest.mark.collgrad(world=[2], inputs=make_inputs)
@pytest.mark.parametrize("k", [1, 2])
def test_parametrized(rank, world, x, k):
    return (x * k).sum()
