"""A module with a complex buffer, as torchtitan's RoPE cache is one
(complex64 freqs_cis), an integer buffer beside it, and float32 parameters
(issue 61 item 2). Each rank's module rotates pairs of its scaled input by
the buffer's unit complex numbers; the ranks' outputs are summed by
torch.distributed.nn.all_reduce and rank r's loss is (r+1) sum(y * y)."""

from typing import Dict, List

import torch
import torch.distributed.nn

N = 3  # complex pairs per rank


class Rotary(torch.nn.Module):
    def __init__(self, rank: int) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.linspace(0.5, 1.5, 2 * N) + 0.25 * rank)
        theta = torch.arange(N, dtype=torch.float32) * 0.7 + 0.3 + 0.1 * rank
        self.register_buffer("freqs", torch.polar(torch.ones(N), theta))   # complex64
        self.register_buffer("index", torch.arange(N))                      # int64, unused by the math

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pairs = (x * self.w).reshape(N, 2).contiguous()
        z = torch.view_as_complex(pairs) * self.freqs[self.index]
        return torch.view_as_real(z).reshape(-1)


def make_inputs(rank: int, world: int) -> Dict[str, object]:
    x = torch.linspace(-1.0, 1.0, 2 * N, dtype=torch.float64) * (rank + 1)
    return {"model": Rotary(rank), "x": x}


def rotate_all_reduce(rank: int, world: int, model: Rotary, x: torch.Tensor) -> torch.Tensor:
    y = torch.distributed.nn.all_reduce(model(x))
    return (y * y).sum() * (rank + 1)


def reference(world: int, keep_imaginary: bool = True) -> List[List[float]]:
    """Each rank's d(sum_r L_r)/dw_r in one process, on the modules as built:
    float64 weights, the complex buffer in complex128 (with keep_imaginary
    False, its real part only, as Module.to(float64) leaves it: another
    model)."""
    models, xs = [], []
    for r in range(world):
        ins = make_inputs(r, world)
        m = ins["model"]
        assert isinstance(m, Rotary)
        w = m.w.detach().to(torch.float64).requires_grad_()
        f = m.freqs.to(torch.complex128) if keep_imaginary else m.freqs.real.to(torch.float64)
        models.append((w, f))
        xs.append(ins["x"])
    outs = []
    for (w, f), x in zip(models, xs):
        pairs = (x * w).reshape(N, 2).contiguous()
        outs.append(torch.view_as_real(torch.view_as_complex(pairs) * f).reshape(-1))
    y = torch.stack(outs).sum(0)
    loss = sum((y * y).sum() * (r + 1) for r in range(world))
    grads = torch.autograd.grad(loss, [w for w, _ in models])
    return [g.tolist() for g in grads]


def make_inputs_complex_param(rank: int, world: int) -> Dict[str, object]:
    ins = make_inputs(rank, world)
    model = ins["model"]
    assert isinstance(model, torch.nn.Module)
    model.c = torch.nn.Parameter(torch.ones(2, dtype=torch.complex64))
    return ins
