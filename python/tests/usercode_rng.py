"""Randomness in the user's code (issue 60 item 13): Megatron-style code seeds
every tensor-parallel rank alike in make_inputs, so that dropout after the
reduce draws one mask on every rank; and randomness the check cannot replay."""

import torch
import torch.distributed.nn

SEED = 1234
N = 8


def make_inputs(rank: int, world: int) -> dict:
    torch.manual_seed(SEED)   # every rank alike, as Megatron's model_parallel_cuda_manual_seed does per tp group
    return {"x": (torch.randn(N, dtype=torch.float64) + rank).requires_grad_()}


def reduce_then_dropout(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    y = torch.distributed.nn.all_reduce(x * (rank + 1))
    z = torch.nn.functional.dropout(y, p=0.5, training=True)
    return (z ** 2).sum()


def expected(rank: int, world: int) -> list:
    """rank's gradient from the math, with the mask every rank draws after
    make_inputs: each rank's loss is L = sum (m y)^2, y = sum_k (k+1) x_k, so
    d(sum_k L_k)/d x_r = W 2 m^2 y (r+1)."""
    xs = []
    for k in range(world):
        torch.manual_seed(SEED)
        xs.append(torch.randn(N, dtype=torch.float64) + k)
    m = torch.nn.functional.dropout(torch.ones(N, dtype=torch.float64), p=0.5, training=True)
    y = sum((k + 1) * x for k, x in enumerate(xs))
    return (world * 2 * m * m * y * (rank + 1)).tolist()


_own = torch.Generator().manual_seed(7)   # a generator of the user's own: nothing can replay it


def own_generator(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return (x * torch.rand(N, dtype=torch.float64, generator=_own)).sum()
