"""Code written for GPUs (issue 61 item 5), as Megatron-core and torchtitan
write it: a buffer allocated on torch.cuda.current_device(), a module moved
with .cuda(), a tensor sent .to("cuda"), torch.cuda.set_device at start.
Rank r's loss is (r+1) sum(all_reduce(w * x)^2)."""

from typing import Dict

import torch
import torch.distributed.nn


class Scale(torch.nn.Module):
    def __init__(self, rank: int) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.linspace(0.5, 1.5, 3, dtype=torch.float64) + rank)


def make_inputs(rank: int, world: int) -> Dict[str, object]:
    torch.cuda.set_device(rank % max(1, torch.cuda.device_count()))
    x = torch.empty(3, dtype=torch.float64, device=torch.cuda.current_device())
    x.copy_(torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) * (rank + 1))
    return {"model": Scale(rank).cuda(), "x": x}


def scaled_loss(rank: int, world: int, model: Scale, x: torch.Tensor) -> torch.Tensor:
    y = torch.distributed.nn.all_reduce(model.w * x.to("cuda"))
    return (y * y).sum() * (rank + 1)


def make_inputs_mesh(rank: int, world: int) -> Dict[str, object]:
    """As make_inputs, with a device mesh asked for as torchtitan's ParallelDims asks
    (init_device_mesh("cuda", ...)) and the loss summed over its group (torch 2.x)."""
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cuda", (world,), mesh_dim_names=("tp",))
    return dict(make_inputs(rank, world), group=mesh.get_group("tp"))


def scaled_loss_mesh(rank: int, world: int, model: Scale, x: torch.Tensor, group: object) -> torch.Tensor:
    y = torch.distributed.nn.all_reduce(model.w * x.to("cuda"), group=group)
    return (y * y).sum() * (rank + 1)
