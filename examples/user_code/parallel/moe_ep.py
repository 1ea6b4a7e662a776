"""An expert-parallel mixture-of-experts layer as torchtitan writes it (issue 51, torch
>= 2.4): W experts, a DTensor Shard(0) over the expert dimension of a 1-D mesh (rank r
hosts expert r), each rank its own tokens; tokens are dispatched to their experts and
combined back with functional collectives' all_to_all_single_autograd. Token t of rank r
goes to expert (t + r) % W. Rank r's loss is the energy of its tokens' outputs; the
global loss is the sum over ranks, so the truth for expert e is the gradient from every
rank's tokens routed to it, and for a rank's tokens their own path through the experts:
one process with every expert computes both (python/tests/usercode_parallel.py).

- step: correct.
- step_expert_scaled: after backward the step multiplies the expert gradients by the
  expert-parallel degree, a scale meant for a loss averaged over the EP group, on a
  summed loss: the experts' gradients exactly W times the truth, the loss unchanged
  (the symptom pytorch #160285 reported at 2 ranks): "x W" on experts alone.
"""

from typing import List, Tuple

import torch

T, D = 4, 3  # tokens per rank, model width


def experts(world: int) -> torch.Tensor:
    """Every expert's weight, (W, D, D): the logical tensor."""
    return torch.randn(world, D, D, dtype=torch.float64, generator=torch.Generator().manual_seed(7)) / D


def tokens(rank: int) -> torch.Tensor:
    return torch.randn(T, D, dtype=torch.float64, generator=torch.Generator().manual_seed(10 + rank))


def route(rank: int, world: int) -> List[int]:
    return [(t + rank) % world for t in range(T)]


def make_inputs(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("ep",))
    w = distribute_tensor(experts(world), mesh, [Shard(0)]).requires_grad_()
    return {"experts": w, "x": tokens(rank).requires_grad_()}


def _splits(rank: int, world: int) -> Tuple[torch.Tensor, List[int], List[int]]:
    dest = torch.tensor(route(rank, world))
    send = [int((dest == e).sum()) for e in range(world)]
    recv = [route(j, world).count(rank) for j in range(world)]  # rank j's tokens for this rank's expert
    return torch.argsort(dest, stable=True), send, recv


def moe(rank: int, world: int, experts: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    from torch.distributed._functional_collectives import all_to_all_single_autograd

    group = experts.device_mesh.get_group("ep")  # type: ignore[attr-defined]
    order, send, recv = _splits(rank, world)
    arrived = all_to_all_single_autograd(x[order], recv, send, group)  # the tokens routed to expert `rank`
    done = arrived @ experts.to_local()[0]  # type: ignore[attr-defined]
    back = all_to_all_single_autograd(done, send, recv, group)  # each token home, in sorted order
    out = torch.empty_like(back).index_copy(0, order, back)
    return (out ** 2).sum()


def step(rank: int, world: int, experts: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    loss = moe(rank, world, experts, x)
    loss.backward()
    return loss


def step_expert_scaled(rank: int, world: int, experts: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    loss = step(rank, world, experts, x)
    with torch.no_grad():
        experts.grad.mul_(world)  # type: ignore[union-attr]
    return loss
