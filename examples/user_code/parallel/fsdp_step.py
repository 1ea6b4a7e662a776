"""A data-parallel training step with FSDP2 (issue 51, torch >= 2.6): fully_shard
over a 1-D mesh of the whole world, each rank its own batch, gradients averaged
(FSDP2's default: the reduce-scatter divides by the world). Every parameter is
Shard(0): rank r's local part is its slice of rows, its own elements. The global
loss is the mean of the ranks' losses, so the check runs with reduction="mean"
and the truth of rank r's slice is that slice of d(mean_k L_k)/d theta, which one
nn.Module on the full batch computes (python/tests/usercode_parallel.py).

- step: correct.
- step_sum: the same step after set_gradient_divide_factor(1.0): the
  reduce-scatter sums where the mean is due, W times the truth ("x W").
"""

import torch

from tp_mlp import D
from tp_mlp import mlp_module as mlp  # the TP examples' MLP: the same logical weights everywhere

ROWS = 8  # divisible by W = 2 and 4


def data() -> torch.Tensor:
    """The global batch; rank r trains on chunk r of its rows."""
    return torch.randn(ROWS, D, dtype=torch.float64, generator=torch.Generator().manual_seed(5))


def make_inputs(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    model = mlp()
    fully_shard(model, mesh=init_device_mesh("cpu", (world,)))
    return {"model": model, "x": data().chunk(world)[rank]}


def step(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    loss = (model(x) ** 2).sum()
    loss.backward()  # FSDP2 reduce-scatters the gradients here, averaged over the world
    return loss


def step_sum(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    model.set_gradient_divide_factor(1.0)  # type: ignore[operator]
    return step(rank, world, model, x)
