"""pytorch:diffdist — the idiom of ag14774/diffdist (the package seed 000's
forum thread ends with), written here in plain torch as that package writes
its autograd Functions, so no extra dependency is needed:

  all_gather: forward dist.all_gather into a list; backward one dist.reduce
      per rank, block j of the gradient summed onto rank j (the right numbers,
      W collectives where one reduce_scatter would do);
  broadcast: forward dist.broadcast of a clone; backward dist.reduce of the
      gradient onto src, in place, returned on every rank, so a rank other
      than src keeps (what gloo's reduce leaves of) its own gradient.

The package has no differentiable all_reduce or reduce (they raise
NotImplementedError there), and its gather and scatter are not what seed 000
uses: a program with any other communication is skipped."""

from typing import List, Optional, Sequence

import torch
import torch.distributed as dist

from . import comm
from .comm import Call

KINDS = ("all_gather", "broadcast")


def _functions(group):
    class AllGatherFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor: torch.Tensor) -> tuple:
            ctx.rank = dist.get_rank(group)
            out: List[torch.Tensor] = [torch.empty_like(tensor) for _ in range(dist.get_world_size(group))]
            dist.all_gather(out, tensor.contiguous(), group=group)
            return tuple(out)

        @staticmethod
        def backward(ctx, *grads: torch.Tensor) -> torch.Tensor:
            blocks = [g.contiguous().clone() for g in grads]
            for j, block in enumerate(blocks):  # rank j receives the sum of every rank's block j
                dist.reduce(block, j, op=dist.ReduceOp.SUM, group=group)  # the job's group is the world
            return blocks[ctx.rank]

    class BroadcastFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor: torch.Tensor, src: int) -> torch.Tensor:
            ctx.src = src
            out = tensor.clone()
            dist.broadcast(out, src, group=group)
            return out

        @staticmethod
        def backward(ctx, grad: torch.Tensor):
            grad = grad.contiguous().clone()
            dist.reduce(grad, ctx.src, op=dist.ReduceOp.SUM, group=group)
            return grad, None

    return AllGatherFunc, BroadcastFunc


class DiffdistApi(comm.Api):
    name = "diffdist"

    def __init__(self, group, backend: str):
        super().__init__(group, backend)
        self.all_gather_fn, self.broadcast_fn = _functions(group)

    def unsupported(self, kinds: Sequence[str]) -> Optional[str]:
        return comm.covers_only(self.name, "the diffdist idiom", kinds, KINDS)

    def all_gather(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        rows = comm.gathered_rows(call)
        parts = self.all_gather_fn.apply(comm.pad_rows(comm.as_rows(x), max(rows)))
        return comm.concat_unpadded(parts, rows)

    def broadcast(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        return self.broadcast_fn.apply(x, call.src)
