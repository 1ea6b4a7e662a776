"""pytorch:gatherlayer — the SimCLR GatherLayer idiom (Spijkervet/SimCLR
simclr/modules/gather.py), copied into many projects: an autograd.Function
whose forward is dist.all_gather and whose backward keeps this rank's slot
of its own gradient. Written here as those projects write it; it covers
all_gather only, so a program with any other communication is skipped."""

from typing import Optional, Sequence

import torch
import torch.distributed as dist

from . import comm
from .comm import Call


def _gather_layer(group):
    class GatherLayer(torch.autograd.Function):
        """Gather tensors from all processes, supporting backward propagation."""

        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            output = [torch.zeros_like(input) for _ in range(dist.get_world_size(group))]
            dist.all_gather(output, input, group=group)
            return tuple(output)

        @staticmethod
        def backward(ctx, *grads):
            (input,) = ctx.saved_tensors
            grad_out = torch.zeros_like(input)
            grad_out[:] = grads[dist.get_rank(group)]
            return grad_out

    return GatherLayer


class GatherLayerApi(comm.Api):
    name = "gatherlayer"

    def __init__(self, group, backend: str):
        super().__init__(group, backend)
        self.layer = _gather_layer(group)

    def unsupported(self, kinds: Sequence[str]) -> Optional[str]:
        return comm.covers_only(self.name, "the SimCLR GatherLayer idiom", kinds, ("all_gather",))

    def all_gather(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        rows = comm.gathered_rows(call)
        parts = self.layer.apply(comm.pad_rows(comm.as_rows(x), max(rows)))
        return comm.concat_unpadded(parts, rows)
