"""A replicated norm weight under sequence parallelism (issue 51, torch >= 2.6):
the rows of x are split over the ranks (rank r holds rows r*R/W .. (r+1)*R/W,
a sequence shard), and every rank scales its rows by one logical weight g, a
Replicate DTensor on a mesh of the whole world. The global loss is the sum of
the ranks' losses, L = sum_r sum((x_r * g)^2), so by DTensor's contract the
truth is dL/dg = sum over all rows of 2 x^2 g (per-rank semantics), the same
on every rank; python/tests/usercode_parallel.py computes it in one process.

- norm_partial: correct: g.to_local(grad_placements=[Partial()]) says the
  local gradient is an addend of the logical one, and the optimizer's
  reduction sums the ranks' parts.
- norm_local: g.to_local() alone (grad_placements Replicate by default, as
  torchtitan #2387 and #2217 had): each rank's copy gets only its own rows'
  part and the replicas diverge, summing to the truth: "partial".
"""

import torch

D, ROWS = 3, 8  # ROWS divisible by W = 2 and 4


def data() -> torch.Tensor:
    g = torch.Generator().manual_seed(2)
    return torch.randn(ROWS, D, dtype=torch.float64, generator=g)


def weight() -> torch.Tensor:
    return torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)


def make_inputs(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, distribute_tensor

    mesh = init_device_mesh("cpu", (world,))
    g = distribute_tensor(weight(), mesh, [Replicate()]).requires_grad_()
    return {"g": g, "rows": data().chunk(world)[rank]}


def norm_partial(rank: int, world: int, g: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import Partial

    return ((rows * g.to_local(grad_placements=[Partial()])) ** 2).sum()  # type: ignore[attr-defined]


def norm_local(rank: int, world: int, g: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    return ((rows * g.to_local()) ** 2).sum()  # type: ignore[attr-defined]
