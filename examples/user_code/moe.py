"""Expert parallelism: a mixture-of-experts layer's dispatch and combine over
all_to_all_single, one expert per rank (torchtitan / DeepSpeed-MoE shape).

Rank r has T tokens; token t goes to expert (t + r) % W. Tokens are sorted by expert,
dispatched (all_to_all_single), multiplied by the receiving rank's expert weight,
combined back (all_to_all_single) and unsorted; the loss is this rank's tokens' output
energy. The global loss is the sum over ranks, and every expert's weight gets gradient
from every rank's tokens.

- moe: right (torch.distributed.nn's all_to_all_single backward is the reverse exchange).
- moe_expert_grad_doubled: the symptom of pytorch #160285 (expert-parallel expert
  gradients exactly 2x at 2 ranks while the loss matched): here an expert-gradient
  scale meant for a loss averaged over the expert-parallel group, on a summed loss.
"""

from typing import List, Tuple

import torch
import torch.distributed.nn

T, D = 4, 2


def make_inputs(rank: int, world: int) -> dict:
    g = torch.Generator().manual_seed(100 + rank)
    return {"tokens": torch.randn(T, D, generator=g, dtype=torch.float64).requires_grad_(),
            "expert": torch.randn(D, D, generator=g, dtype=torch.float64).requires_grad_()}


def _route(rank: int, world: int) -> Tuple[torch.Tensor, List[int], List[int]]:
    dest = torch.tensor([(t + rank) % world for t in range(T)])
    order = torch.argsort(dest, stable=True)
    send = [int((dest == j).sum()) for j in range(world)]
    recv = [sum(1 for t in range(T) if (t + j) % world == rank) for j in range(world)]
    return order, send, recv


def _layer(rank: int, world: int, tokens: torch.Tensor, expert: torch.Tensor) -> torch.Tensor:
    order, send, recv = _route(rank, world)
    out = torch.empty(sum(recv), D, dtype=tokens.dtype)
    arrived = torch.distributed.nn.all_to_all_single(out, tokens[order], output_split_sizes=recv,
                                                     input_split_sizes=send)
    worked = torch.tanh(arrived @ expert)
    back = torch.empty(T, D, dtype=tokens.dtype)
    combined = torch.distributed.nn.all_to_all_single(back, worked, output_split_sizes=send,
                                                      input_split_sizes=recv)
    y = torch.empty_like(combined).index_copy(0, order, combined)
    return (y * y).sum()


def moe(rank: int, world: int, tokens: torch.Tensor, expert: torch.Tensor) -> torch.Tensor:
    return _layer(rank, world, tokens, expert)


def moe_expert_grad_doubled(rank: int, world: int, tokens: torch.Tensor, expert: torch.Tensor) -> torch.Tensor:
    return _layer(rank, world, tokens, _ScaleGrad.apply(expert, float(world)))


class _ScaleGrad(torch.autograd.Function):
    """Identity forward; backward scales the expert's gradient by the expert-parallel
    world, a correction meant for a loss averaged over that group applied to a loss
    that is summed: the loss is unchanged, the expert's gradient is W x the truth."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: float) -> torch.Tensor:  # type: ignore[override]
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g: torch.Tensor) -> Tuple[torch.Tensor, None]:  # type: ignore[override]
        return g * ctx.scale, None
