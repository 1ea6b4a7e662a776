"""JAX tests as a user marks them (run by test_jax_pytest.py, not collected
by the unit runner): the example's right make_loss, its planted bug, and a
marker keyword the JAX check does not take."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "examples", "jax"))
import all_gather  # noqa: E402
import dp_tp  # noqa: E402

make_inputs = all_gather.make_inputs


@pytest.mark.collgrad(world=[2, 4], framework="jax", inputs=make_inputs)
def test_gather_right(mesh):
    return all_gather.make_loss(mesh)


@pytest.mark.collgrad(world=[2], framework="jax", inputs="make_inputs")
def test_gather_own_block(mesh):
    return all_gather.make_loss_own_block(mesh)


@pytest.mark.collgrad(world=[2], framework="jax", inputs=make_inputs, backend="gloo")
def test_gather_backend(mesh):
    return all_gather.make_loss(mesh)


@pytest.mark.collgrad(framework="jax", mesh={"dp": 2, "tp": 2}, inputs=dp_tp.make_inputs)
def test_dp_tp_mesh(mesh):
    return dp_tp.make_loss(mesh)
