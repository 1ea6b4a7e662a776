"""Correct user code that binds the process group of the check it is imported in
(issue 52 item 6), for test_usercode_warm: torch.distributed.nn takes
`group=group.WORLD` as a default argument, evaluated when it is first imported,
and this module makes a group and (torch 2.x) a DeviceMesh at import, as
training scripts do at their top. A cold rank imports it once, inside its one
check's group; a warm rank must give every later check the same: objects of
the first check's group, destroyed when it ended, never reach the next.

Every function is right by torch.distributed.nn's per-rank contract where that
version's rules are right; the test compares warm verdicts with cold ones."""

from typing import Dict, List

import torch
import torch.distributed as dist
import torch.distributed.nn
import torch.distributed.nn.functional as dnn

WORLD = dist.get_world_size()
EVERYONE = dist.new_group(list(range(WORLD)))  # made at import: a group the module keeps
try:
    from torch.distributed.device_mesh import init_device_mesh

    MESH = init_device_mesh("cpu", (WORLD,), mesh_dim_names=("dp",))
except ImportError:  # torch 1.13 has no DeviceMesh
    MESH = None


def make_inputs(rank: int, world: int) -> Dict[str, torch.Tensor]:
    return {"x": (torch.arange(2 * world, dtype=torch.float64) + rank + 1).requires_grad_()}


def _weights(n: int) -> torch.Tensor:
    return torch.arange(1, n + 1, dtype=torch.float64)


def broadcast(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return (dnn.broadcast(x, 0) * _weights(x.numel()) * (rank + 1)).sum()


def reduce(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    y = dnn.reduce(x, 0)  # every rank calls it and its backward: only the root's value counts
    return (y ** 2).sum() * (1.0 if rank == 0 else 0.0)


def all_reduce(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return (dnn.all_reduce(x) * _weights(x.numel())).sum() * (rank + 1)


def all_gather(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return (torch.cat(dnn.all_gather(x)) ** 2).sum() * (rank + 1)


def gather(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    out = dnn.gather(x, 0)
    return (torch.cat(out) ** 2).sum() * (1.0 if rank == 0 else 0.0)


def all_to_all(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    outs: List[torch.Tensor] = [torch.empty(2, dtype=x.dtype) for _ in range(world)]
    got = dnn.all_to_all(outs, list(x.split(2)))
    return (torch.cat(got) * _weights(x.numel())).sum() * (rank + 1)


def all_to_all_single(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    out = dnn.all_to_all_single(torch.empty_like(x), x)
    return (out * _weights(x.numel())).sum() * (rank + 1)


def on_import_group(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return (dnn.all_reduce(x, group=EVERYONE) ** 2).sum()


def on_import_mesh(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    group = MESH.get_group("dp") if MESH is not None else EVERYONE
    return (dnn.all_reduce(x, group=group) ** 2).sum()


FUNCTIONS = ["broadcast", "reduce", "all_reduce", "all_gather", "gather", "all_to_all", "all_to_all_single",
             "on_import_group", "on_import_mesh"]
