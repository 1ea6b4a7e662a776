"""DTensor (torch 2.x): a Shard(0) tensor redistributed to Replicate, the shape of
pytorch #153016 / #172932 (gradients that differ between two ways of gathering).

x_r is this rank's shard of a DTensor sharded on dim 0 over a 1-D DeviceMesh; the
program gathers it two ways -- redistribute to Replicate, and full_tensor() -- and rank
r's loss is (r + 1) sum(whole^2), so the per-rank truth is d(sum_k L_k)/d x_r =
2 (1 + ... + W) x_r: [0, 6] and [12, 18] at W=2 (x_0 = [0, 1], x_1 = [2, 3]).

Measured with torch 2.15.0 (gloo, pip), W=2 and 4: both ways give each rank only its own
loss's gradient (rank 0 [0, 2], rank 1 [8, 12] at W=2). That is DTensor's contract, not a
torch bug: to_local() and full_tensor() declare the gradient coming back to the Replicate
tensor Replicate, the same on every rank, and Replicate -> Shard then keeps the local
chunk, with no reduction. Ranks whose losses differ break that contract: their code must
say the gradient is an addend, to_local(grad_placements=[Partial()]), and the check names
the mistake ("only this rank's own loss reaches it"). With the same loss on every rank
(redistribute_same_loss) the contract holds: right under replicated semantics, 1/W of the
per-rank sum. Needs DTensor's public module, torch.distributed.tensor (2.15.0 has it,
2.4.1 not); the test skips without it.
"""

import torch
import torch.distributed as dist


def make_inputs(rank: int, world: int) -> dict:
    return {"x": (torch.arange(2, dtype=torch.float64) + 2 * rank).requires_grad_()}


def _mesh(world: int):  # type: ignore[no-untyped-def]
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", (world,))


def redistribute_replicate(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import DTensor, Replicate, Shard

    d = DTensor.from_local(x, _mesh(world), [Shard(0)])
    whole = d.redistribute(placements=[Replicate()]).to_local()
    return (rank + 1) * (whole * whole).sum()


def full_tensor(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import DTensor, Shard

    whole = DTensor.from_local(x, _mesh(world), [Shard(0)]).full_tensor()
    return (rank + 1) * (whole * whole).sum()


def redistribute_same_loss(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    """Every rank's loss the same function of the gathered whole: DTensor's backward
    (a Replicate gradient is taken to be the same on every rank, and Replicate -> Shard
    keeps the local chunk) is then right under replicated semantics, and per-rank
    semantics sees it as 1/W of the sum."""
    from torch.distributed.tensor import DTensor, Replicate, Shard

    d = DTensor.from_local(x, _mesh(world), [Shard(0)])
    whole = d.redistribute(placements=[Replicate()]).to_local()
    return (whole * whole).sum()
