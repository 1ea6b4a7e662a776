"""Functions at the scale where finite differences lose digits (issue 60 item 2):
a loss of about 1e7 over 1M elements, so rounding in L alone moves a central
difference at h = 1e-6 by about 1e-2."""

import torch
import torch.distributed.nn

N = 1_000_000


def make_line(rank: int, world: int) -> dict:
    x = torch.linspace(-1, 1, N, dtype=torch.float64) + 0.1 * rank
    return {"x": x.requires_grad_()}


def tanh_all_reduce(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    """Right: torch.distributed.nn.all_reduce's backward sums the ranks' gradients."""
    return (torch.distributed.nn.all_reduce(torch.tanh(x) * (rank + 1)) ** 2).sum()


class _Stretch(torch.autograd.Function):
    """The identity whose backward scales by 1 + 1e-3: a gradient wrong by 1e-3 relative."""

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):  # type: ignore[no-untyped-def]
        return g * (1 + 1e-3)


def tanh_all_reduce_off(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return tanh_all_reduce(rank, world, _Stretch.apply(x))


def exact(world: int, seed: int) -> list:
    """Each rank's exact directional derivative of the global loss along the
    check's own direction (fd.direction), from the formula, not from the
    tool: every rank's loss is L = sum_i S_i^2, S_i = sum_k (k+1) tanh(x_k,i),
    so d(sum_k L_k)/d x_r = W * 2 S (r+1) sech^2(x_r)."""
    from collgrad_torch.checker import fd

    xs = [make_line(r, world)["x"].detach() for r in range(world)]
    s = sum((k + 1) * torch.tanh(x) for k, x in enumerate(xs))
    out = []
    for r, x in enumerate(xs):
        g = world * 2 * s * (r + 1) / torch.cosh(x) ** 2
        out.append(float(g @ fd.direction(seed, r, N)))
    return out
