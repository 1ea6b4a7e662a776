"""One rank of a real-framework run: `python -m collgrad_torch.runner.rank ...`.

Started W times by the C tool (harness/pytorch/backend_pytorch.c) with RANK and
WORLD_SIZE set. Runs the jobs of one exported IR document (one case each, at
the document's world size) from --first-job on, in order, and writes a line
per job (results.py). Before each job the ranks meet at a barrier in the
store and make a fresh process group for it, so a job whose ranks issued
different collectives (one rank hung, another raised) cannot leave messages
that the next job's collectives would match.

A collective that does not complete within --collective-timeout raises in
PyTorch (the group's timeout); that job is reported as a hang on that rank
and the run goes on. Exit status: 0 when every job was reported, 2 for a
bad IR or arguments, 3 when the rank cannot run (torch missing, the process
group cannot be formed).
"""

import argparse
import datetime
import os
import sys
import time
import traceback
import warnings
from typing import Any, Dict, List, Optional, Tuple

from collgrad_core import ir
from collgrad_core.exit_class import ExitClass
from .results import Writer, tensors


def _args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m collgrad_torch.runner.rank")
    p.add_argument("--ir", required=True, help="the exported IR document (one world)")
    p.add_argument("--api", required=True, help="nn, c10d, funcol, gatherlayer, diffdist, rpc or listassign")
    p.add_argument("--backend", default="gloo", help="gloo, nccl, mpi, NAME or MODULE:NAME")
    p.add_argument("--store", required=True, help="the FileStore path (fresh for every launch)")
    p.add_argument("--results", required=True)
    p.add_argument("--status", required=True)
    p.add_argument("--first-job", type=int, default=0)
    p.add_argument("--collective-timeout", type=float, default=30.0)
    p.add_argument("--startup-timeout", type=float, default=120.0)
    return p.parse_args(argv)


def _origin(e: BaseException) -> str:
    """file:line of the innermost Python frame the exception passed through."""
    tb = traceback.extract_tb(e.__traceback__)
    return f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""


def _is_timeout(e: BaseException) -> bool:
    text = str(e).lower()
    return "timed out" in text or "timeout" in text


class Marks:
    """Which statement was running when each recorded warning was emitted."""

    def __init__(self, caught: List[warnings.WarningMessage]):
        self.caught = caught
        self.marks: List[Tuple[int, str, str]] = []

    def mark(self, phase: str, where: str) -> None:
        self.marks.append((len(self.caught), phase, where))

    def warnings(self) -> List[Dict[str, Any]]:
        out = []
        for i, w in enumerate(self.caught):
            phase, where = "forward", ""
            for start, p, at in self.marks:
                if start <= i:
                    phase, where = p, at
            out.append({"phase": phase, "at": where, "category": w.category.__name__,
                        "message": str(w.message)})
        return out


def _barrier(store, name: str, rank: int, world: int) -> None:
    """Every rank meets here, through the store (not the process group under
    test). No timeout of its own: the tool's deadline ends a rank that never comes."""
    store.set(f"{name}/rank{rank}", "1")
    store.wait([f"{name}/rank{r}" for r in range(world)], datetime.timedelta(hours=24))


def _run_and_finish(r, api) -> None:
    """The program, then its sends still in flight complete before the job
    ends. When the program raised, that exception is the finding: a send
    that then cannot complete does not replace it."""
    try:
        r.run()
    except Exception:
        try:
            api.finish()
        except Exception:
            pass
        raise
    api.finish()


_groups: List[Any] = []  # the current job's process group, kept until the next job's barrier


def run_job(k: int, case: ir.Case, args: argparse.Namespace, store, backend: str, writer: Writer,
            rank: int, world: int, device: Any = None) -> None:
    import torch.distributed as dist

    from . import apis, comm, interp, kinds, rpc_job

    writer.state(k, "waiting for the other ranks at the job's barrier")
    _barrier(store, f"job{k}", rank, world)
    # every rank is past job k-1 now: its group may go (not before, or a send
    # the peer has yet to receive would be dropped with it)
    _groups[:] = [dist.new_group(list(range(world)),
                                 timeout=datetime.timedelta(seconds=args.collective_timeout))]
    group = _groups[0]
    line: Dict[str, Any] = {"job": k, "case": case.name, "rank": rank, "outcome": "ok", "warnings": []}
    t0 = time.monotonic()
    try:
        api = apis.make(args.api, group, backend)
        api.timeout = datetime.timedelta(seconds=args.collective_timeout)
        api.device = device
        reason = api.unsupported(kinds.expand(case.kinds()))
        if not reason and case.makes_groups() and not api.groups:
            reason = f"process groups (group(), mesh()) are not in pytorch:{args.api} yet (pytorch:nn has them)"
        if not reason and args.api == "rpc":
            api.job, api.rank, api.timeout_s = k, rank, args.collective_timeout
            if case.calls("zero_grad"):
                reason = "pytorch:rpc runs one dist_autograd.backward per job; this case calls zero_grad"
    except comm.Unavailable as e:
        reason = str(e)
    if reason:
        line.update(outcome="skipped", reason=reason, seconds=0.0, tensors=[])
        writer.line(line)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        marks = Marks(caught)

        def on_stmt(phase: str, where: str) -> None:
            marks.mark(phase, where)
            writer.state(k, f"{phase} at {where}")

        r = interp.Rank(case, rank, world, api, on_stmt)
        try:
            if args.api == "rpc":
                rpc_job.run(k, r, api, rank, world, args.collective_timeout)
            else:
                _run_and_finish(r, api)
        except comm.Unsupported as e:
            line.update(outcome="skipped", reason=f"{args.api} has no {e}")
        except Exception as e:  # whatever the framework raised is the finding
            hang = _is_timeout(e)
            line["outcome"] = "hang" if hang else "raised"
            line["error"] = {"type": type(e).__name__, "message": str(e)[:4000], "phase": r.phase,
                             "at": r.where, "origin": _origin(e),
                             "by": "interpreter" if isinstance(e, interp.CaseError) else "framework"}
        line["warnings"] = marks.warnings()
    line["seconds"] = time.monotonic() - t0
    line["tensors"] = tensors(r.bindings())
    writer.line(line)


def main(argv: Optional[List[str]] = None) -> int:
    args = _args(argv)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback only (docs/pytorch-backend.md: isolation)
    os.environ.setdefault("TP_SOCKET_IFNAME", "lo")    # TensorPipe's too (pytorch:rpc)
    writer = Writer(args.results, args.status)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    writer.state(-1, "importing torch")
    try:
        import torch
        import torch.distributed  # noqa: F401 (the process group needs it; fail here if it is missing)
    except Exception as e:
        writer.line({"fatal": f"{sys.executable} cannot import torch: {type(e).__name__}: {e}"})
        return ExitClass.INFRA
    from . import ops

    doc, why = ir.load_for(args.ir, ops.missing, "collgrad_torch")
    if doc is None:
        writer.line({"fatal": why})
        return ExitClass.USAGE
    from . import apis, comm, kinds
    from .. import backend as pg

    try:  # a kind's file from outside the tree that does not load is the user's input, refused once
        kinds.modules()
    except kinds.KindError as e:
        writer.line({"fatal": str(e), "class": int(ExitClass.USAGE)})
        return ExitClass.USAGE

    if args.api not in apis.APIS:
        writer.line({"fatal": f"unknown API '{args.api}' (expected one of {', '.join(apis.APIS)})"})
        return ExitClass.USAGE
    hello: Dict[str, Any] = {"rank": rank, "world": world, "torch": torch.__version__,
                             "python": sys.executable,
                             "python_version": sys.version.split()[0], "api": args.api,
                             "backend": args.backend}
    writer.state(-1, f"joining the {args.backend} process group")
    try:
        store, name = pg.init(args.backend, args.store, rank, world, args.startup_timeout)
        device = pg.device(name, rank)
    except Exception as e:
        writer.line({"fatal": f"cannot form the {args.backend} process group: {type(e).__name__}: {e}"})
        return ExitClass.INFRA
    hello["backend_name"] = name
    hello["device"] = str(device or "cpu")
    if args.api == "rpc":
        writer.state(-1, "joining the RPC group (TensorPipe)")
        try:
            from . import api_rpc

            api_rpc.init(f"{args.store}.rpc", rank, world, args.startup_timeout)
        except Exception as e:
            writer.line({"fatal": f"cannot join the RPC group: {type(e).__name__}: {e}"})
            return ExitClass.INFRA
    try:
        apis.make(args.api, None, name)
    except comm.Unavailable as e:
        hello["api_unavailable"] = str(e)
    writer.line({"hello": hello})
    for k in range(args.first_job, len(doc.cases)):
        run_job(k, doc.cases[k], args, store, name, writer, rank, world, device)
    # leave together: a rank that exits closes its connections, and a rank still
    # waiting in the last job would see "connection closed" instead of its hang
    writer.state(len(doc.cases), "finished, waiting for the other ranks to finish")
    _barrier(store, "done", rank, world)
    writer.state(len(doc.cases), "finished")
    sys.stdout.flush()
    sys.stderr.flush()
    # skip interpreter shutdown: a process group whose collective timed out
    # may block in its destructor; everything this rank had to say is written
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
