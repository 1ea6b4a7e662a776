"""DTensor (torch 2.x): a Shard(0) tensor redistributed to Replicate, the shape of
pytorch #153016 / #172932 (gradients that differ between two ways of gathering).

x_r is this rank's shard of a DTensor sharded on dim 0 over a 1-D DeviceMesh; the
program gathers it two ways -- redistribute to Replicate, and full_tensor() -- and every
rank's loss uses the gathered whole. What torch does is recorded by running it (the
examples' test), not assumed. Needs torch >= 2.4 (DTensor's public module); the test
skips it with the reason on torch 1.13.
"""

import torch
import torch.distributed as dist


def make_inputs(rank: int, world: int) -> dict:
    return {"x": (torch.arange(2, dtype=torch.float64) + 2 * rank).requires_grad_()}


def _mesh(world: int):  # type: ignore[no-untyped-def]
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", (world,))


def redistribute_replicate(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import DTensor, Replicate, Shard

    d = DTensor.from_local(x, _mesh(world), [Shard(0)])
    whole = d.redistribute(placements=[Replicate()]).to_local()
    return (rank + 1) * (whole * whole).sum()


def full_tensor(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import DTensor, Shard

    whole = DTensor.from_local(x, _mesh(world), [Shard(0)]).full_tensor()
    return (rank + 1) * (whole * whole).sum()
