"""A function of a given size, for scripts/usercode-time.sh: each rank holds an 8x8
input (64 elements), all-gathers it through torch.distributed.nn and multiplies the
gathered rows by its own block; the loss weights the result by the rank."""

import torch
import torch.distributed.nn


def make_inputs(rank: int, world: int) -> dict:
    g = torch.Generator().manual_seed(rank)
    return {"x": torch.randn(8, 8, generator=g, dtype=torch.float64).requires_grad_()}


def gather_matmul(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    rows = torch.cat(torch.distributed.nn.all_gather(x))
    return (rank + 1) * torch.tanh(rows @ x).sum()
