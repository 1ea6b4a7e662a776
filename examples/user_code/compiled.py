"""torch.compile modes (issue 36 item 3; torch 2.x): the same function checked
as it is and under torch.compile(backend="aot_eager" / "inductor"), every mode
against one finite-difference truth computed in eager.

    check(fn, world=2, inputs=make_inputs, modes=["eager", "aot_eager", "inductor"])

x_r = [1, 2, ..., 2W] + 10 r on rank r, float64.

funcol_all_gather (pytorch #148701's shape): y = all_gather_tensor_autograd(x)
(every rank's x, in rank order), L_r = (r + 1) sum(y^2). Per-rank truth:
d(sum_k L_k)/dx_r = 2 x_r (1 + 2 + ... + W) = W (W + 1) x_r.

ulysses_all_to_all (DeepSpeed PR #8491's shape): a sequence-parallel
all_to_all_single written into an empty_like buffer inside an
autograd.Function whose backward is the same all_to_all, L_r = (r + 1) sum(y^2)
with y = the all_to_all of x. The all_to_all permutes elements between ranks:
element i of x_r lands on rank i // (2W / W) = i // 2, so the per-rank truth is
2 (k + 1) x_r[i] with k = i // 2.

What each mode actually gives is recorded by python/tests/usercode_torch2.py
for the torch version it runs (findings with versions, never assumed).
"""

import torch
import torch.distributed as dist


def make_inputs(rank: int, world: int) -> dict:
    x = torch.arange(1, 2 * world + 1, dtype=torch.float64) + 10 * rank
    return {"x": x.requires_grad_()}


def funcol_all_gather(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    import torch.distributed._functional_collectives as funcol

    y = funcol.all_gather_tensor_autograd(x, gather_dim=0, group=dist.group.WORLD)
    return ((rank + 1) * y * y).sum()


class SeqAllToAll(torch.autograd.Function):
    """DeepSpeed's Ulysses shape: all_to_all_single into an empty_like buffer."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        out = torch.empty_like(x)
        dist.all_to_all_single(out, x.contiguous())
        return out

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return SeqAllToAll.apply(g)


def ulysses_all_to_all(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    y = SeqAllToAll.apply(x)
    return ((rank + 1) * y * y).sum()
