"""A row-parallel Linear as Megatron-core's RowParallelLinear lays it out
(issue 61 item 3): rank r holds the columns [r*K, (r+1)*K) of the weight
(its shard of the input features) and a copy of the whole bias; the partial
products are summed by an all-reduce whose backward is the identity
(Megatron's reduce_from_tensor_model_parallel_region: every rank's loss is
the same logical loss, so each rank's gradient of it is already whole),
then the bias is added on every rank."""

from typing import Dict

import torch
import torch.distributed as dist

K = 2       # input features per rank
OUT = 3


class _ReduceFromRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        y = x.clone()
        dist.all_reduce(y)
        return y

    @staticmethod
    def backward(ctx, g):  # type: ignore[no-untyped-def]
        return g


class RowParallel(torch.nn.Module):
    def __init__(self, rank: int, world: int) -> None:
        super().__init__()
        full = torch.arange(OUT * K * world, dtype=torch.float64).reshape(OUT, K * world) / 10 - 0.5
        self.weight = torch.nn.Parameter(full[:, rank * K:(rank + 1) * K].clone())
        self.bias = torch.nn.Parameter(torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ReduceFromRegion.apply(x @ self.weight.T) + self.bias


def make_inputs(rank: int, world: int) -> Dict[str, object]:
    x = torch.linspace(-1.0, 1.0, K * world, dtype=torch.float64)[rank * K:(rank + 1) * K]
    return {"model": RowParallel(rank, world), "x": x}


def loss(rank: int, world: int, model: RowParallel, x: torch.Tensor) -> torch.Tensor:
    return (model(x) ** 2).sum()


def make_inputs_megatron(rank: int, world: int) -> Dict[str, object]:
    """The same layer with the attributes Megatron-core's RowParallelLinear
    sets: the weight a partition along dimension 1, the bias a whole tensor
    (set_defaults_if_not_set_tensor_model_parallel_attributes)."""
    ins = make_inputs(rank, world)
    model = ins["model"]
    assert isinstance(model, RowParallel)
    setattr(model.weight, "tensor_model_parallel", True)
    setattr(model.weight, "partition_dim", 1)
    setattr(model.bias, "tensor_model_parallel", False)
    setattr(model.bias, "sequence_parallel", False)
    return ins
