"""A tensor-parallel MLP as torchtitan and the PyTorch TP tutorial write it
(issue 51, torch >= 2.6): parallelize_module(mlp, mesh, {"up": ColwiseParallel(),
"down": RowwiseParallel()}) on a 1-D mesh of the whole world. up.weight and
up.bias are Shard(0), down.weight Shard(1), down.bias Replicate: one logical
bias held by every rank. Every rank computes the same loss from the same
(replicated) input, so the semantics is replicated: the truth is d L / d theta
for the logical parameters, which a single-process nn.Module with the full
weights computes (python/tests/usercode_parallel.py does, independently of the
check).

- mlp: correct. The check once perturbed down.bias on one rank alone and
  called this "x W" (issue 51); by DTensor's contract every copy moves.
- mlp_bias_partial: down's bias added through b.to_local(grad_placements=
  [Partial()]) in a computation every rank repeats: each rank's gradient is
  the whole truth, declared a partial sum, so the optimizer's reduction gives
  W times the truth (torchtitan #2106's shape): "x W" on down.bias.
"""

import torch

D, H, ROWS = 4, 8, 4  # H and D divisible by W = 2 and 4


def mlp_module() -> torch.nn.Module:
    torch.manual_seed(0)  # the same logical weights on every rank (and in the reference)
    m = torch.nn.Sequential()
    m.add_module("up", torch.nn.Linear(D, H))
    m.add_module("act", torch.nn.Tanh())
    m.add_module("down", torch.nn.Linear(H, D))
    return m.double()


def data() -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    return torch.randn(ROWS, D, dtype=torch.float64, generator=g)


def make_inputs(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh("cpu", (world,))
    model = parallelize_module(mlp_module(), mesh, {"up": ColwiseParallel(), "down": RowwiseParallel()})
    return {"model": model, "x": data()}


def mlp(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return (model(x) ** 2).sum()


def _down_without_bias(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """up and the activation as the plan runs them, then down's matmul alone:
    its Partial sum made whole over the ranks."""
    from torch.distributed.tensor import DTensor, Partial, Replicate

    h = model.act(model.up(x))  # a local Shard(-1) activation (ColwiseParallel's output)
    w = model.down.weight  # Shard(1) over the rows of down's input
    part = h @ w.to_local().t()  # this rank's addend of h_full @ W^T
    return DTensor.from_local(part, w.device_mesh, [Partial()]).redistribute(placements=[Replicate()]).to_local()


def mlp_bias_partial(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import Partial

    y = _down_without_bias(model, x) + model.down.bias.to_local(grad_placements=[Partial()])
    return (y ** 2).sum()
