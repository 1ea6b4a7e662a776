"""FSDP2 + tensor parallelism on a 2-D mesh (dp=2, tp=2) as torchtitan builds it
(issue 51, torch >= 2.6, W=4): parallelize_module over mesh["tp"] (up
ColwiseParallel, down RowwiseParallel), then fully_shard over mesh["dp"]. The
two ranks of a tp group share one batch (rank r trains on batch r // 2) and
compute the same loss; the dp groups' batches differ. FSDP2 averages over dp,
so the gradient is the mean over the dp batches, which is the mean of the four
ranks' losses (each batch's loss counted twice): reduction="mean". The
placements say what each rank holds: up.weight (_StridedShard(0), Shard(0)),
down.weight (Shard(0), Shard(1)), down.bias (Shard(0), Replicate()): a slice
of down.bias is one logical slice held by both ranks of a tp group
(python/tests/usercode_parallel.py cuts the single-process gradients alike).

- step: correct (the check once said "x 2: a group's size" on down.bias: its
  two copies were perturbed one at a time).
- step_bias_twice: after backward the step all-reduces down.bias's gradient
  over the tp group once more (a sync the plan already made): x tp's size.
- step, inputs make_inputs_body: the MLP with a `body` Linear the TP plan
  leaves out; fully_shard over mesh["dp"] makes body's parameters Shard(0) on
  the dp sub-mesh alone, so the two ranks of a tp group hold copies of one
  shard (issue 60 item 14: the check once perturbed each copy alone and
  called the correct step "no known pattern").
"""

import torch

from fsdp_step import data, mlp

DP, TP = 2, 2


def make_inputs(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    if world != DP * TP:
        raise ValueError(f"the FSDP + TP example runs at W={DP * TP}, not {world}")
    mesh = init_device_mesh("cpu", (DP, TP), mesh_dim_names=("dp", "tp"))
    model = parallelize_module(mlp(), mesh["tp"], {"up": ColwiseParallel(), "down": RowwiseParallel()})
    fully_shard(model, mesh=mesh["dp"])
    return {"model": model, "x": data().chunk(DP)[rank // TP]}


def mlp_with_body() -> torch.nn.Module:
    """mlp() followed by body, a Linear(D, D) of its own (seeded apart: the same everywhere)."""
    from tp_mlp import D

    model = mlp()
    torch.manual_seed(1)
    model.add_module("body", torch.nn.Linear(D, D).double())
    return model


def make_inputs_body(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    if world != DP * TP:
        raise ValueError(f"the FSDP + TP example runs at W={DP * TP}, not {world}")
    mesh = init_device_mesh("cpu", (DP, TP), mesh_dim_names=("dp", "tp"))
    model = parallelize_module(mlp_with_body(), mesh["tp"], {"up": ColwiseParallel(), "down": RowwiseParallel()})
    fully_shard(model, mesh=mesh["dp"])   # body: Shard(0) over dp alone, a copy on each rank of a tp group
    return {"model": model, "x": data().chunk(DP)[rank // TP]}


def step(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    loss = (model(x) ** 2).sum()
    loss.backward()
    return loss


def step_bias_twice(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    import torch.distributed as dist

    loss = step(rank, world, model, x)
    g = model.down.bias.grad  # a (Shard(0), Replicate()) DTensor: already whole over tp
    dist.all_reduce(g.to_local(), group=g.device_mesh.get_group("tp"))
    return loss
