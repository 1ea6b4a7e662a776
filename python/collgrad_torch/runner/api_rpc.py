"""pytorch:rpc — send and recv as torch.distributed.rpc calls inside one
distributed autograd context (seed 004, the "Distributed Autograd Design"
note): a send is an rpc_sync that hands the tensor to the peer's mailbox, so
dist_autograd attaches a send/recv function pair to it; the backward is one
dist_autograd.backward over every rank's roots, and the gradients are read
with dist_autograd.get_gradients (leaves) and retain_grad (the rest).

Why rank 0 drives every job: a dist_autograd context cannot be entered by a
second rank, it only travels with an RPC. So rank 0 opens the context, runs
its own program, and asks every other rank to run its program inside an RPC
handler (which runs in the caller's context). That RPC carries a
zero-element "carrier" tensor that requires grad, since only an RPC with
such a tensor carries the context; the handler returns carrier.sum() with
its roots, so the carrier's send/recv pair receives a gradient too (FAST
mode waits for every send function of the context: one that never receives
a gradient is a hang, which is what a send whose result no loss uses does).

One backward for the job: each backward(x) statement adds sum(x) to the
roots, which is what the case language means as long as no zero_grad comes
between two of them; a program with zero_grad is skipped.
"""

import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from . import comm
from .comm import Call

KINDS = ("send", "recv")


def _rpc():
    import torch.distributed.rpc as rpc

    return rpc


def _dist_autograd():
    import torch.distributed.autograd as dist_autograd

    return dist_autograd


def worker(rank: int) -> str:
    return f"rank{rank}"


def init(init_file: str, rank: int, world: int, timeout_s: float) -> None:
    """Join the RPC group: TensorPipe over the loopback interface (uv
    transport, basic channel: no shared memory or CMA a container may deny),
    its rendezvous a fresh file beside the process group's store."""
    rpc = _rpc()
    opts = rpc.TensorPipeRpcBackendOptions(init_method=f"file://{init_file}", rpc_timeout=timeout_s,
                                           _transports=["uv"], _channels=["basic"])
    rpc.init_rpc(worker(rank), rank=rank, world_size=world, rpc_backend_options=opts)


def shutdown() -> None:
    """Leave without waiting for peers (a hung job's backward may never end)."""
    try:
        _rpc().shutdown(graceful=False)
    except Exception:
        pass


# ---- the mailbox: what peers sent this rank, by (job, src, dst, tag) ---------------

_box: Dict[Tuple[int, int, int, int], torch.Tensor] = {}
_box_cv = threading.Condition()


def _deliver(key: Tuple[int, int, int, int], t: torch.Tensor) -> None:
    """RPC target: a peer's send lands here (its recv function is in the context)."""
    with _box_cv:
        _box[key] = t
        _box_cv.notify_all()


def _take(key: Tuple[int, int, int, int], timeout_s: float) -> torch.Tensor:
    with _box_cv:
        if not _box_cv.wait_for(lambda: key in _box, timeout=timeout_s):
            raise TimeoutError(f"recv from rank {key[1]} timed out after {timeout_s:g} s: no rpc delivered it")
        return _box.pop(key)


def forget_before(job: int) -> None:
    """Drop what earlier jobs sent and nobody received (a job that failed)."""
    with _box_cv:
        for key in [k for k in _box if k[0] < job]:
            del _box[key]


class RpcApi(comm.Api):
    name = "rpc"

    def __init__(self, group, backend: str):
        super().__init__(group, backend)
        try:
            rpc = _rpc()
            ok = rpc.is_available() and _dist_autograd().is_available()
        except ImportError:
            ok = False
        if not ok:
            raise comm.Unavailable("this torch is built without torch.distributed.rpc")
        self.job = 0
        self.rank = 0
        self.timeout_s = 30.0
        self.roots: List[torch.Tensor] = []
        self.backward_at: Optional[str] = None  # the first backward statement, for its failure
        self.grads: Dict[torch.Tensor, torch.Tensor] = {}

    def unsupported(self, kinds: Sequence[str]) -> Optional[str]:
        return comm.covers_only("rpc", "torch.distributed.rpc has no collectives", kinds, KINDS)

    def send(self, call: Call, x: torch.Tensor) -> None:
        _rpc().rpc_sync(worker(call.peer), _deliver, args=((self.job, call.rank, call.peer, call.seq), x),
                        timeout=self.timeout_s)

    def recv(self, call: Call, dtype: torch.dtype) -> torch.Tensor:
        return _take((self.job, call.peer, call.rank, call.event.tag), self.timeout_s)

    def backward(self, t: torch.Tensor, where: str) -> None:
        """Deferred: the job's one dist_autograd.backward takes sum(t) as a root."""
        if self.backward_at is None:
            self.backward_at = where
        self.roots.append(t.sum() if t.dim() > 0 else t)

    def gradient(self, t: torch.Tensor) -> Optional[torch.Tensor]:
        """A leaf's gradient lives in the context, not in .grad."""
        return self.grads.get(t) if t.is_leaf else t.grad

    def read_gradients(self, context_id: int) -> None:
        self.grads = dict(_dist_autograd().get_gradients(context_id))
