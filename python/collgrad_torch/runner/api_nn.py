"""pytorch:nn — torch.distributed.nn.functional, the autograd-aware
collectives (torch/distributed/nn/functional.py). Every collective is the
module's own function; ragged blocks are padded (comm.py). The module has no
send/recv, so point-to-point programs are skipped. On a process group every
rank runs the line, a non-member too (nonmember): what the module returns
there is the measurement (tests/torch/findings-subgroups.txt)."""

from typing import Optional, Sequence

import torch

from . import comm
from .comm import Call


class NnApi(comm.Api):
    name = "nn"
    groups = True

    def __init__(self, group, backend: str):
        super().__init__(group, backend)
        import torch.distributed.nn.functional as F

        self.F = F

    def unsupported(self, kinds: Sequence[str]) -> Optional[str]:
        if "send" in kinds or "recv" in kinds:
            return "torch.distributed.nn has no differentiable send/recv"
        for kind in kinds:
            fn = "all_to_all_single" if kind == "all_to_all" else kind
            if not hasattr(self.F, fn):  # send and recv were refused above
                return f"torch {torch.__version__}: torch.distributed.nn.functional has no {fn}"
        return None

    def all_reduce(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        return self.F.all_reduce(x, op=comm.reduce_op(call.op), group=self.pg(call))

    def all_gather(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        rows = comm.gathered_rows(call)
        parts = self.F.all_gather(comm.pad_rows(comm.as_rows(x), max(rows)), group=self.pg(call))
        return comm.concat_unpadded(parts, rows)

    def reduce_scatter(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        pieces = comm.call_blocks(call, comm.as_rows(x))
        most = max(p.shape[0] for p in pieces)
        padded = [comm.pad_rows(p, most) for p in pieces]
        out = padded[call.rank].new_empty(padded[call.rank].shape)
        y = self.F.reduce_scatter(out, padded, op=comm.reduce_op(call.op), group=self.pg(call))
        return y[:pieces[call.rank].shape[0]]

    def broadcast(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        return self.F.broadcast(x, call.src, group=self.pg(call))

    def reduce(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        y = self.F.reduce(x, call.src, op=comm.reduce_op(call.op), group=self.pg(call))
        return comm.zero_nonroot(y, call)

    def gather(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        rows = comm.gathered_rows(call)
        parts = self.F.gather(comm.pad_rows(comm.as_rows(x), max(rows)), dst=call.src, group=self.pg(call))
        if call.rank != call.root:
            return comm.empty_result(parts)
        return comm.concat_unpadded(parts, rows)

    def scatter(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        most, block = comm.scatter_shapes(call)
        x = comm.as_rows(x)
        if call.rank == call.root or tuple(x.shape) == tuple(call.event.shapes[call.root] or (1,)):
            # every rank runs the same line, F.scatter(list of x's blocks): the
            # receivers' blocks are not sent, but are the inputs autograd sees
            padded = [comm.pad_rows(p, most) for p in comm.blocks(x, call.world)]
        else:  # a receiver whose x cannot be split like the root's passes placeholders
            padded = [x.new_zeros(block) for _ in range(call.world)]
        y = self.F.scatter(padded, src=call.src, group=self.pg(call))
        n = comm.rows_of(call.event.shapes[call.root])
        return y[:comm.block_rows(n, call.world, call.rank)]

    def all_to_all(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        send, recv = comm.all_to_all_splits(call)
        x = comm.as_rows(x)
        out = x.new_empty((sum(recv),) + tuple(x.shape[1:]))
        return self.F.all_to_all_single(out, x, output_split_sizes=recv, input_split_sizes=send,
                                        group=self.pg(call))

    def nonmember(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        """The module's function called off its group, as a user's line runs on
        every rank: c10d's call is a no-op there, and what comes back (and
        flows back) is the module's own doing."""
        g = self.pg(call)
        if call.kind == "all_reduce":
            return self.F.all_reduce(x, op=comm.reduce_op(call.op), group=g)
        if call.kind == "broadcast":
            return self.F.broadcast(x, call.src, group=g)
        if call.kind == "reduce":
            return self.F.reduce(x, call.src, op=comm.reduce_op(call.op), group=g)
        if call.kind == "all_gather":
            return torch.cat(self.F.all_gather(comm.as_rows(x), group=g))
        if call.kind == "gather":
            return torch.cat(self.F.gather(comm.as_rows(x), dst=call.src, group=g))
        if call.kind == "scatter":
            return self.F.scatter(list(comm.as_rows(x).chunk(max(call.world, 1))), src=call.src, group=g)
        if call.kind == "all_to_all":
            return self.F.all_to_all_single(torch.empty_like(x), x, group=g)
        if call.kind == "reduce_scatter":  # the members' line: the group's blocks of x
            blocks = comm.blocks(comm.as_rows(x), max(call.world, 1))
            return self.F.reduce_scatter(torch.empty_like(blocks[0]), blocks, op=comm.reduce_op(call.op),
                                         group=g)
        raise comm.Unsupported(f"{call.kind} off its group")
