"""One job of pytorch:rpc (api_rpc.py says why it is shaped so).

Rank 0, in its main thread: open a dist_autograd context; ask every other
rank, by RPC, to run its program (`_remote`, which runs in rank 0's
context); run its own program; collect every rank's roots; run the one
backward (bounded by the job's timeout: FAST mode waits forever for a send
function that never receives a gradient); tell every rank the outcome
(`_finish`, which also reads that rank's gradients while the context still
exists); leave the context.

Every other rank, in its main thread: register the job, so the RPC handler
can find its program, and wait for `_finish`. Whatever a rank's program
raised, in the handler thread, is raised again in its main thread, so the
job's line reports it as any API's job does.
"""

import threading
from typing import Any, Dict, List, Optional, Tuple

import torch

from . import api_rpc

Outcome = Optional[Tuple[str, str, str]]  # (hang or raised, exception type, message); None: fine


class _Job:
    def __init__(self, r: Any, api: api_rpc.RpcApi):
        self.r = r                      # the interp.Rank of this rank
        self.api = api
        self.error: Optional[BaseException] = None  # what this rank's program raised
        self.outcome: Outcome = None    # the backward's, from rank 0
        self.finished = threading.Event()


_jobs: Dict[int, _Job] = {}
_jobs_cv = threading.Condition()


def _registered(k: int, timeout_s: float) -> _Job:
    with _jobs_cv:
        if not _jobs_cv.wait_for(lambda: k in _jobs, timeout=timeout_s):
            raise TimeoutError(f"job {k} was never started on this rank")
        return _jobs[k]


def _run_program(job: _Job) -> bool:
    try:
        job.r.run()
        return True
    except Exception as e:  # reported by this rank's own line
        job.error = e
        return False


def _remote(k: int, carrier: torch.Tensor) -> Tuple[bool, List[torch.Tensor]]:
    """RPC target on rank p > 0: its program, in rank 0's context. Returns
    (it ran to the end, its roots and carrier.sum())."""
    job = _registered(k, job_wait_s(_jobs_timeout.get(k, 30.0)))
    ok = _run_program(job)
    return ok, list(job.api.roots) + [carrier.sum()]


def _finish(k: int, context_id: int, outcome: Outcome) -> None:
    """RPC target (and rank 0's own last step): the backward's outcome, and
    this rank's gradients read while the context exists."""
    job = _jobs.get(k)
    if job is None:
        return
    job.outcome = outcome
    try:
        job.api.read_gradients(context_id)
    except Exception as e:  # the context is gone: no gradient to report
        if job.error is None and job.outcome is None:
            job.outcome = ("raised", type(e).__name__, f"dist_autograd.get_gradients: {e}")
    job.finished.set()


_jobs_timeout: Dict[int, float] = {}


def job_wait_s(timeout_s: float) -> float:
    """How long a rank waits for the others' part of a job: every recv of a
    program may take a timeout; the C tool's deadline ends a job before."""
    return 4 * timeout_s + 30


def _backward(context_id: int, roots: List[torch.Tensor], timeout_s: float) -> Outcome:
    import torch.distributed.autograd as dist_autograd

    said: List[BaseException] = []

    def run() -> None:
        try:
            dist_autograd.backward(context_id, roots, retain_graph=True)
        except BaseException as e:
            said.append(e)

    t = threading.Thread(target=run, name="dist_autograd.backward", daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        return ("hang", "TimeoutError",
                f"dist_autograd.backward timed out after {timeout_s:g} s (FAST mode waits for a "
                "gradient for every send function of the context: a sent tensor whose result no root "
                "reaches never gets one)")
    if said:
        return ("raised", type(said[0]).__name__, str(said[0]))
    return None


def _drive(k: int, job: _Job, world: int, timeout_s: float) -> None:
    import torch.distributed.autograd as dist_autograd
    import torch.distributed.rpc as rpc

    with dist_autograd.context() as context_id:
        carrier = torch.zeros(0, requires_grad=True)
        futures = [rpc.rpc_async(api_rpc.worker(p), _remote, args=(k, carrier), timeout=job_wait_s(timeout_s))
                   for p in range(1, world)]
        ok = _run_program(job)
        roots = list(job.api.roots)
        backward_calls = len(roots)  # roots besides the carriers
        for f in futures:
            try:
                ran, theirs = f.wait()
            except Exception:  # that rank's handler failed; its own line says how
                ran, theirs = False, []
            ok &= ran
            roots += theirs
            backward_calls += max(len(theirs) - 1, 0)
        # a job some rank did not finish is reported by that rank; no backward then
        outcome = _backward(context_id, roots, timeout_s) if ok and backward_calls else None
        for p in range(1, world):
            try:
                rpc.rpc_sync(api_rpc.worker(p), _finish, args=(k, context_id, outcome), timeout=timeout_s)
            except Exception:  # that rank stops waiting at its own limit
                pass
        _finish(k, context_id, outcome)


def _raise_outcome(job: _Job) -> None:
    if job.outcome is None:
        return
    how, kind, message = job.outcome
    if how == "raised" and not job.api.roots:
        return  # the backward of another rank's roots raised; this rank had none
    job.r.phase = "backward"
    if job.api.backward_at:
        job.r.where = job.api.backward_at
    if how == "hang":
        raise TimeoutError(message)
    raise RuntimeError(f"{kind}: {message}")


def run(k: int, r: Any, api: api_rpc.RpcApi, rank: int, world: int, timeout_s: float) -> None:
    """This rank's part of job k; raises what the job's line reports."""
    api_rpc.forget_before(k)
    job = _Job(r, api)
    with _jobs_cv:
        for old in [j for j in _jobs if j < k]:
            del _jobs[old]
            _jobs_timeout.pop(old, None)
        _jobs[k] = job
        _jobs_timeout[k] = timeout_s
        _jobs_cv.notify_all()
    if rank == 0:
        _drive(k, job, world, timeout_s)
    elif not job.finished.wait(job_wait_s(timeout_s)):
        raise TimeoutError(f"rank 0 did not end job {k} within {job_wait_s(timeout_s):g} s")
    if job.error is not None:
        raise job.error
    _raise_outcome(job)
