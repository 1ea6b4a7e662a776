"""pytorch:funcol — torch.distributed._functional_collectives (torch 2.x),
the traceable functional collectives, called as they are (no *_autograd
variant): whatever autograd does with them, including passing a gradient
straight through an op it has no rule for (with a warning), is the result.
funcol has no reduce, gather, scatter or send/recv; torch before 2.0 has no
funcol at all (Unavailable)."""

from typing import Optional, Sequence

import torch

from . import comm
from .comm import Call

_OPS = {"sum": "sum", "avg": "avg", "prod": "product", "max": "max", "min": "min"}


class FuncolApi(comm.Api):
    name = "funcol"

    def __init__(self, group, backend: str):
        super().__init__(group, backend)
        try:
            import torch.distributed._functional_collectives as funcol
        except ImportError as e:
            raise comm.Unavailable(f"torch {torch.__version__} has no "
                                   f"torch.distributed._functional_collectives (added in torch 2.0): {e}")
        self.funcol = funcol

    def unsupported(self, kinds: Sequence[str]) -> Optional[str]:
        names = {"all_reduce": "all_reduce", "all_gather": "all_gather_tensor",
                 "reduce_scatter": "reduce_scatter_tensor", "broadcast": "broadcast",
                 "all_to_all": "all_to_all_single"}
        for kind in kinds:
            fn = names.get(kind)
            if fn is None:
                return f"torch.distributed._functional_collectives has no {kind}"
            if not hasattr(self.funcol, fn):
                return f"torch {torch.__version__}: _functional_collectives has no {fn}"
        return None

    def all_reduce(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        return self.funcol.all_reduce(x, _OPS[call.op], self.group)

    def all_gather(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        rows = comm.gathered_rows(call)
        most = max(rows)
        flat = self.funcol.all_gather_tensor(comm.pad_rows(comm.as_rows(x), most), 0, self.group)
        parts = [flat[r * most:(r + 1) * most] for r in range(call.world)]
        return comm.concat_unpadded(parts, rows)

    def reduce_scatter(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        pieces = comm.call_blocks(call, comm.as_rows(x))
        most = max(p.shape[0] for p in pieces)
        padded = torch.cat([comm.pad_rows(p, most) for p in pieces])
        y = self.funcol.reduce_scatter_tensor(padded, _OPS[call.op], 0, self.group)
        return y[:pieces[call.rank].shape[0]]

    def broadcast(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        return self.funcol.broadcast(x, call.root, self.group)

    def all_to_all(self, call: Call, x: torch.Tensor) -> torch.Tensor:
        send, recv = comm.all_to_all_splits(call)
        return self.funcol.all_to_all_single(comm.as_rows(x), recv, send, self.group)
