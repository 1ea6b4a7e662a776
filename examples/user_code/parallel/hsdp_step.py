"""A hybrid-sharded (HSDP) training step with FSDP2 (issue 51, torch >= 2.6, W=4):
fully_shard over a 2-D mesh (replicate=2, shard=2), each rank its own batch,
gradients averaged over all four (a reduce-scatter in each shard group, then an
all-reduce across the replicas). Every parameter is (Replicate(), Shard(0)):
the rows of shard s are one logical slice held by the two ranks of coordinate
s, which the check perturbs together. The global loss is the mean of the
ranks' losses (reduction="mean"); the truth of a slice is that slice of
d(mean_k L_k)/d theta, which one nn.Module on the full batch computes
(python/tests/usercode_parallel.py).

- step: correct (the check once said "no known pattern" on every parameter:
  each copy of a slice was perturbed alone).
- step_sum: set_gradient_divide_factor(1.0): both reductions sum where the
  mean is due, W times the truth ("x W").
"""

import torch

from fsdp_step import data, mlp

REPLICAS, SHARDS = 2, 2


def make_inputs(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    if world != REPLICAS * SHARDS:
        raise ValueError(f"the HSDP example runs at W={REPLICAS * SHARDS}, not {world}")
    model = mlp()
    mesh = init_device_mesh("cpu", (REPLICAS, SHARDS), mesh_dim_names=("replicate", "shard"))
    fully_shard(model, mesh=mesh)
    return {"model": model, "x": data().chunk(world)[rank]}


def step(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    loss = (model(x) ** 2).sum()
    loss.backward()
    return loss


def step_sum(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    model.set_gradient_divide_factor(1.0)  # type: ignore[operator]
    return step(rank, world, model, x)
