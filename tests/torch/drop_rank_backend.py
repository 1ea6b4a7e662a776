"""A deliberately wrong third-party process group, for the tool's own tests
(tests/e2e/torch_backend.sh): gloo underneath, but all_reduce drops rank
1's contribution (rank 1 adds zeros instead of its tensor). Registered as
"droprank" with torch.distributed.Backend.register_backend, which is how a
new backend is brought to collgrad-check:

    collgrad-check --backend pytorch:nn --torch-backend tests/torch/drop_rank_backend.py:droprank

Every other collective is gloo's, unchanged. Written against torch 1.13's
Python-subclassable ProcessGroup.
"""

import torch.distributed as dist
from torch._C import _distributed_c10d as c10d


class DropRank(c10d.ProcessGroup):
    """gloo, except that rank 1's all_reduce input counts as zeros."""

    def __init__(self, store, rank: int, size: int, timeout):
        super().__init__(rank, size)
        self.inner = c10d.ProcessGroupGloo(store, rank, size, timeout)

    def allreduce(self, tensors, opts=None):
        if self.rank() == 1:  # the bug under test: this rank's contribution is lost
            for t in tensors:
                t.zero_()
        return self.inner.allreduce(tensors, opts) if opts is not None else self.inner.allreduce(tensors)

    def getBackendName(self) -> str:
        return "droprank"


def _forward(name):
    def method(self, *args):
        return getattr(self.inner, name)(*args)
    method.__name__ = name
    return method


for _name in ("allgather", "_allgather_base", "broadcast", "reduce", "gather", "scatter", "reduce_scatter",
              "_reduce_scatter_base", "alltoall", "alltoall_base", "barrier", "send", "recv", "recv_anysource"):
    setattr(DropRank, _name, _forward(_name))

dist.Backend.register_backend("droprank", lambda store, rank, size, timeout: DropRank(store, rank, size, timeout))
