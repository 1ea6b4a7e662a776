"""DTensor inputs (issue 36 item 4; torch's public torch.distributed.tensor, which 2.4.1
lacks and 2.15.0 has): make_inputs returns DTensors
with placements over a 1-D DeviceMesh, and the check reads them by DTensor's
contract (issue 51): a Shard or Partial local part is perturbed alone, the
per-rank truth d(sum_k L_k)/d(local part of rank r); a Replicate tensor is one
logical tensor, every copy perturbed together, the truth d(sum_k L_k)/dw.

full = [0, 1, ..., 2W - 1] (float64, the same on every rank).

shard_redistribute (pytorch #153016's shape): x = distribute_tensor(full,
Shard(0)), so rank r holds x_r = [2r, 2r + 1]; the function redistributes x
to Replicate, takes the local whole, and L_r = (r + 1) sum(whole^2). The
per-rank truth is 2 (1 + ... + W) x_r = W (W + 1) x_r: [0, 6] and [12, 18] at
W=2. The ranks' losses differ while to_local() of the Replicate result declares
its gradient Replicate: the program breaks DTensor's contract (it wants
grad_placements=[Partial()] there), so each shard gets only its own rank's loss's
gradient, the user code's mistake the check names ("only this rank's own loss
reaches it"), not torch's.

replicate_weight: w = distribute_tensor(full, Replicate()), one logical w with
a copy on every rank; L_r = (r + 1) sum((w * w).to_local()). The truth is
d(sum_k L_k)/dw = 2 (1 + ... + W) w = W (W + 1) w on every rank. The ranks'
losses differ while w.to_local() declares its gradient Replicate (the
default grad_placements): that breaks DTensor's contract, which wants
grad_placements=[Partial()] there, and each copy gets only its own rank's
2 (r + 1) w: replicas that diverge ("replicas diverge", each rank's value named)
and sum to the truth ("partial").

partial_sum: p = DTensor.from_local(v_r, Partial()) with v_r = full / W + r
(the logical tensor is the sum of every rank's v_r); the function
redistributes p to Replicate (a sum over the ranks) and L_r = (r + 1)
sum(whole^2). Each rank's v_r enters the sum once, so the truth is
2 (1 + ... + W) whole = W (W + 1) whole on every rank. As in shard_redistribute,
the differing losses after to_local() break the contract: each addend gets its own
rank's loss's gradient only ("only this rank's own loss reaches it").

What torch actually gives is recorded by python/tests/usercode_torch2.py.
"""

import torch


def _mesh(world: int):  # type: ignore[no-untyped-def]
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", (world,))


def _full(world: int) -> torch.Tensor:
    return torch.arange(2 * world, dtype=torch.float64)


def make_shard_inputs(rank: int, world: int) -> dict:
    from torch.distributed.tensor import Shard, distribute_tensor

    return {"x": distribute_tensor(_full(world), _mesh(world), [Shard(0)]).requires_grad_()}


def make_replicate_inputs(rank: int, world: int) -> dict:
    from torch.distributed.tensor import Replicate, distribute_tensor

    return {"w": distribute_tensor(_full(world), _mesh(world), [Replicate()]).requires_grad_()}


def make_partial_inputs(rank: int, world: int) -> dict:
    from torch.distributed.tensor import DTensor, Partial

    v = _full(world) / world + rank
    return {"p": DTensor.from_local(v, _mesh(world), [Partial()]).detach().requires_grad_()}


def shard_redistribute(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import Replicate

    whole = x.redistribute(placements=[Replicate()]).to_local()  # type: ignore[attr-defined]
    return (rank + 1) * (whole * whole).sum()


def replicate_weight(rank: int, world: int, w: torch.Tensor) -> torch.Tensor:
    return (rank + 1) * (w * w).to_local().sum()  # type: ignore[attr-defined]


def partial_sum(rank: int, world: int, p: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import Replicate

    whole = p.redistribute(placements=[Replicate()]).to_local()  # type: ignore[attr-defined]
    return (rank + 1) * (whole * whole).sum()
