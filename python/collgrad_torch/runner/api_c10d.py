"""pytorch:c10d — plain torch.distributed collectives inside autograd, the
way users write them (pytorch/pytorch#58005): the in-place ones (all_reduce,
broadcast, reduce) on a clone of the operand, so autograd sees only the
clone; the out-of-place ones fill fresh tensors that carry no gradient.
No backward rule is involved at all: whatever autograd does is the result.
send is isend (a ring of blocking sends would deadlock, as it would for a
user); the program's sends are waited for at its end."""

from typing import List, Optional, Sequence

import torch
import torch.distributed as dist

from . import comm
from .comm import Call


class C10dApi(comm.Api):
    name = "c10d"

    def __init__(self, group, backend: str):
        super().__init__(group, backend)
        self.pending: List = []

    def unsupported(self, kinds: Sequence[str]) -> Optional[str]:
        return None

    def finish(self) -> None:
        pending, self.pending = self.pending, []
        for work in pending:
            work.wait()

    def all_reduce(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        dist.all_reduce(y, op=comm.reduce_op(call.op), group=self.group)
        return y

    def broadcast(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        dist.broadcast(y, call.root, group=self.group)
        return y

    def reduce(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        dist.reduce(y, call.root, op=comm.reduce_op(call.op), group=self.group)
        return comm.zero_nonroot(y, call)

    def all_gather(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        rows = comm.gathered_rows(call)
        mine = comm.pad_rows(comm.as_rows(x), max(rows))
        parts = [torch.empty_like(mine) for _ in range(call.world)]
        dist.all_gather(parts, mine, group=self.group)
        return comm.concat_unpadded(parts, rows)

    def reduce_scatter(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        pieces = comm.call_blocks(call, comm.as_rows(x))
        most = max(p.shape[0] for p in pieces)
        padded = [comm.pad_rows(p, most) for p in pieces]
        out = torch.empty_like(padded[call.rank])
        dist.reduce_scatter(out, padded, op=comm.reduce_op(call.op), group=self.group)
        return out[:pieces[call.rank].shape[0]]

    def gather(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        rows = comm.gathered_rows(call)
        mine = comm.pad_rows(comm.as_rows(x), max(rows))
        if call.rank != call.root:
            dist.gather(mine, None, dst=call.root, group=self.group)
            return mine.detach()[:0]
        parts = [torch.empty_like(mine) for _ in range(call.world)]
        dist.gather(mine, parts, dst=call.root, group=self.group)
        return comm.concat_unpadded(parts, rows)

    def scatter(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        most, block = comm.scatter_shapes(call)
        out = torch.empty(block, dtype=x.dtype, device=x.device)
        pieces = None
        if call.rank == call.root:
            pieces = [comm.pad_rows(p, most) for p in comm.blocks(comm.as_rows(x), call.world)]
        dist.scatter(out, pieces, src=call.root, group=self.group)
        n = comm.rows_of(call.event.shapes[call.root])
        return out[:comm.block_rows(n, call.world, call.rank)]

    def all_to_all(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        send, recv = comm.all_to_all_splits(call)
        x = comm.as_rows(x)
        out = x.new_empty((sum(recv),) + tuple(x.shape[1:]))
        dist.all_to_all_single(out, x, output_split_sizes=recv, input_split_sizes=send, group=self.group)
        return out

    def send(self, call: Call, x: torch.Tensor) -> None:
        self.pending.append(dist.isend(x.detach().contiguous(), call.peer, group=self.group, tag=call.seq))

    def recv(self, call: Call, dtype: torch.dtype) -> torch.Tensor:
        y = torch.empty(call.event.shapes[call.peer], dtype=dtype, device=self.device)
        dist.recv(y, call.peer, group=self.group, tag=call.event.tag)
        return y
