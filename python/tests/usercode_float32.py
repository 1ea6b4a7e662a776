"""A model that computes in float32 where it asks, as transformers' Llama
does (issue 61 item 1): an RMSNorm that casts its input .to(torch.float32)
and back (LlamaRMSNorm), a softmax(dtype=torch.float32) (eager attention),
and the loss on logits.float() (ForCausalLMLoss). Each rank's block; the
ranks' outputs summed by torch.distributed.nn.all_reduce; rank r's loss
(r + 1) cross_entropy(y.float(), labels)."""

from typing import Dict, List

import torch
import torch.distributed.nn
import torch.nn.functional as F

N = 4       # features
ROWS = 2    # tokens
EPS = 1e-6


class Norm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(0.8, 1.2, N))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        dtype = h.dtype
        h = h.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS)
        return self.weight * h.to(dtype)


class Block(torch.nn.Module):
    def __init__(self, rank: int) -> None:
        super().__init__()
        torch.manual_seed(100 + rank)
        self.norm = Norm()
        self.proj = torch.nn.Linear(N, N)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(self.norm(x))
        return torch.softmax(h, dim=-1, dtype=torch.float32).to(h.dtype) * h


def labels() -> torch.Tensor:
    return torch.tensor([1, 3])


def make_inputs(rank: int, world: int) -> Dict[str, object]:
    x = torch.linspace(-1.0, 1.0, ROWS * N, dtype=torch.float64).reshape(ROWS, N) + 0.3 * rank
    return {"model": Block(rank), "x": x}


def block_loss(rank: int, world: int, model: Block, x: torch.Tensor) -> torch.Tensor:
    y = torch.distributed.nn.all_reduce(model(x))
    return F.cross_entropy(y.float(), labels()) * (rank + 1)


def reference(world: int) -> List[Dict[str, List[float]]]:
    """Each rank's d(sum_r L_r)/d(its parameters), in one process, all in
    float64 (the math of Block with no cast): per rank, name -> gradient."""
    params, outs = [], []
    for r in range(world):
        ins = make_inputs(r, world)
        m = ins["model"]
        assert isinstance(m, Block)
        p = {n: t.detach().to(torch.float64).requires_grad_() for n, t in m.named_parameters()}
        x = ins["x"]
        assert isinstance(x, torch.Tensor)
        h = p["norm.weight"] * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS))
        h = h @ p["proj.weight"].T + p["proj.bias"]
        outs.append(torch.softmax(h, dim=-1) * h)
        params.append(p)
    y = torch.stack(outs).sum(0)
    loss = sum(F.cross_entropy(y, labels()) * (r + 1) for r in range(world))
    names = list(params[0])
    grads = torch.autograd.grad(loss, [p[n] for p in params for n in names])
    return [{n: grads[r * len(names) + i].reshape(-1).tolist() for i, n in enumerate(names)} for r in range(world)]


def make_inputs_linear(rank: int, world: int) -> Dict[str, object]:
    torch.manual_seed(200 + rank)
    x = torch.linspace(-1.0, 1.0, ROWS * N, dtype=torch.float64).reshape(ROWS, N) + 0.3 * rank
    return {"lin": torch.nn.Linear(N, N), "x": x}


def bfloat16_loss(rank: int, world: int, lin: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """A mixed-precision forward: the Linear's matmul in bfloat16 (its input and weights cast with
    .bfloat16(), as a bf16 training step computes), the reduction and the loss in float32."""
    h = F.linear(x.bfloat16(), lin.weight.bfloat16(), lin.bias.bfloat16())
    y = torch.distributed.nn.all_reduce(h.float())
    return (y * y).sum() * (rank + 1)


def linear_reference(world: int) -> List[Dict[str, List[float]]]:
    """bfloat16_loss's gradients in float64 with no cast, in one process."""
    params, outs = [], []
    for r in range(world):
        ins = make_inputs_linear(r, world)
        lin, x = ins["lin"], ins["x"]
        assert isinstance(lin, torch.nn.Linear) and isinstance(x, torch.Tensor)
        p = {n: t.detach().to(torch.float64).requires_grad_() for n, t in lin.named_parameters()}
        outs.append(x @ p["weight"].T + p["bias"])
        params.append(p)
    y = torch.stack(outs).sum(0)
    loss = sum((y * y).sum() * (r + 1) for r in range(world))
    names = list(params[0])
    grads = torch.autograd.grad(loss, [p[n] for p in params for n in names])
    return [{n: grads[r * len(names) + i].reshape(-1).tolist() for i, n in enumerate(names)} for r in range(world)]
