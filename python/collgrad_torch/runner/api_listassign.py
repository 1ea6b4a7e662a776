"""pytorch:listassign — "solution two" of the post "All Gather and Gradients"
(seed 001): dist.all_gather into a list of fresh tensors, which carry no
gradient, then `all_x[rank] = x`, so the gathered result's own slot is the
autograd-tracked input and every other slot a constant. No
autograd.Function is involved: the backward keeps this rank's slot of its
own gradient, what the gatherlayer emulation computes. It covers all_gather
only, so a program with any other communication is skipped."""

from typing import Optional, Sequence

import torch
import torch.distributed as dist

from . import comm
from .comm import Call


class ListAssignApi(comm.Api):
    name = "listassign"

    def unsupported(self, kinds: Sequence[str]) -> Optional[str]:
        return comm.covers_only(self.name, "the all_x[rank] = x idiom", kinds, ("all_gather",))

    def all_gather(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        rows = comm.gathered_rows(call)
        mine = comm.pad_rows(comm.as_rows(x), max(rows))
        all_x = [torch.empty_like(mine) for _ in range(call.world)]
        dist.all_gather(all_x, mine.detach().contiguous(), group=self.group)
        all_x[call.rank] = mine  # the idiom: the own slot keeps its autograd history
        return comm.concat_unpadded(all_x, rows)
