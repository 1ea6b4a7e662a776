"""A custom autograd.Function with a deliberately wrong backward, between collectives.

cube: y = x^3, whose derivative is 3 x^2; the backward below returns 3 x instead. The
values pass through torch.distributed.nn.all_reduce (right), so only the Function is
wrong, and its error has no known shape: the check says so and shows the numbers.
"""

import torch
import torch.distributed.nn


class WrongCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        return g * 3 * x  # should be 3 * x ** 2


def make_inputs(rank: int, world: int) -> dict:
    return {"x": (torch.tensor([0.5, 1.5, -2.0], dtype=torch.float64) + rank).requires_grad_()}


def wrong_cube(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    s = torch.distributed.nn.all_reduce(WrongCube.apply(x))
    return (rank + 1) * s.sum()
