"""One rank of a check: `python -m collgrad_torch.checker.worker SPEC RANK`,
or of a warm world that serves check after check: `... worker --serve DIR RANK`
(warm_rank.py).

Started W times by spawn.py. Joins the process group under test, builds its
inputs, runs the user's function once with backward (the analytic gradient),
then runs it again at every point of the finite-difference schedule in
lockstep with the other ranks, recording only its own loss. Everything goes
to files in the check's private directory, never over the backend under test:
- rank{R}.json: the result, written once at the end (atomically);
- rank{R}.error.json: what went wrong, when something did;
- rank{R}.status: "PID<TAB>PHASE", replaced as the rank moves on, so the
  parent can tell a hang from slow progress and say where each rank was;
- rank{R}.stack: Python stacks dumped by faulthandler on SIGUSR1 (the parent
  sends it to a hung rank before killing it, to name the call it waits in).
Exit status: 0 done, 2 the user's code or inputs are at fault, 3 the rank
could not run (torch, the process group).
"""

import faulthandler
import json
import os
import signal
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from collgrad_core.exit_class import ExitClass
from . import lockstep, precision, rank_grads, transport_errors
from .lockstep import TransportError
from .rng_state import RngState, seed as _seed
from .messages import RankError, RankResult, Spec, TensorMeta


class UserError(Exception):
    """The function or its inputs are at fault (exit 2)."""


class Rank:
    def __init__(self, spec: Spec, rank: int):
        self.spec, self.rank, self.world, self.dir = spec, rank, spec["world"], spec["dir"]
        self.phase, self.last_status = "starting", 0.0
        self.store: Any = None
        self.local_rank = rank   # its device index under nccl: a launcher's LOCAL_RANK (launched.py)

    def join(self) -> Tuple[Any, str]:
        """Join the process group under test: (the check's store, the backend's name)."""
        from .. import backend as pg

        # the group's own timeout well past the parent's watchdog: a hang is named from the
        # ranks' stacks by the parent, not from inside a collective that gave up first
        return pg.init(self.spec["backend"], self.spec["store"], self.rank, self.world, 2 * self.spec["timeout"] + 10)

    def path(self, suffix: str) -> str:
        return os.path.join(self.dir, f"rank{self.rank}.{suffix}")

    def status(self, phase: str, force: bool = True) -> None:
        """Progress for the parent's watchdog; throttled inside the FD loop."""
        self.phase = phase
        now = time.monotonic()
        if not force and now - self.last_status < 0.2:
            return
        self.last_status = now
        tmp = self.path("status.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\t{phase}\n")
        os.replace(tmp, self.path("status"))

    def write(self, suffix: str, obj: Mapping[str, object]) -> None:
        tmp = self.path(suffix + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(obj, f)
        os.replace(tmp, self.path(suffix))

    def fail(self, cls: ExitClass, message: str, tb: str) -> ExitClass:
        """rank{R}.error.json (messages.RankError); cls, the rank's exit status."""
        error: RankError = {"rank": self.rank, "class": int(cls), "phase": self.phase, "message": message,
                            "traceback": tb}
        self.write("error.json", error)
        return cls


def _group_sizes() -> List[int]:
    """The size of every process group that exists now (the user's new_group
    calls, a DeviceMesh's groups), read from c10d's own table: torch 1.13 keeps
    it in _pg_group_ranks, 2.x in _world.pg_group_ranks. A pattern candidate:
    a gradient off by a group's size."""
    import torch.distributed.distributed_c10d as c10d

    table = getattr(c10d, "_pg_group_ranks", None)
    if table is None:
        table = getattr(getattr(c10d, "_world", None), "pg_group_ranks", {})
    return sorted({len(ranks) for ranks in table.values()})


def _scalar(value: Any, what: str, rank: int) -> float:
    import torch

    from . import placements

    if placements.is_dtensor(value):  # a Replicate loss's copy, a Partial loss's addend (loss_copies says which)
        value = value.to_local()
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point():  # .long(), a comparison: no gradient, and a value that steps
            raise UserError(f"{what} on rank {rank} has dtype {str(value.dtype).replace('torch.', '')}: a loss "
                            "must be a real floating tensor (a .long(), .int(), comparison or complex value "
                            "has no gradient to check)")
        if value.numel() != 1:
            raise UserError(f"{what} on rank {rank} has shape {list(value.shape)}: return a scalar loss "
                            "(e.g. loss.sum()), or a list of scalar roots")
        return float(value.detach().reshape(()).item())
    if isinstance(value, (int, float)):
        return float(value)
    raise UserError(f"{what} on rank {rank} is a {type(value).__name__}, not a scalar tensor")


def _loss_copies(loss: Any, rank: int) -> List[int]:
    """The ranks whose loss is the same logical loss as this rank's: a
    DTensor loss says so by its placements (Replicate over the whole mesh:
    every rank holds the one loss, loss_parallel's; Partial: each rank holds
    an addend of the sum, its own); a plain tensor is this rank's own."""
    from . import placements

    return placements.dtensor_holders(loss) or [rank]


class Program:
    """The user's fn (we run backward) or step (it runs its own backward and
    gradient sync); both give this rank's loss."""

    def __init__(self, r: Rank, fn: Callable[..., Any], is_step: bool, kwargs: Dict[str, Any]):
        self.r, self.fn, self.is_step, self.kwargs = r, fn, is_step, kwargs
        self.notes: List[str] = []
        self.roots = 1
        self.loss_copies: List[int] = []   # the ranks holding a copy of this rank's loss (a DTensor's)
        self.loss_dtype: Any = None        # the last run's loss dtype (its rounding bounds the differences)

    def run(self, backward: bool) -> float:
        import torch
        import torch.distributed as dist

        with precision.default_float64():   # a factory's default dtype is the inputs' (precision.py)
            out = self.fn(self.r.rank, self.r.world, **self.kwargs)
        if not dist.is_initialized():  # the next point would fail inside torch, with no word of why
            raise UserError(f"{'the step' if self.is_step else 'fn'} destroyed the default process group on rank "
                            f"{self.r.rank} (dist.destroy_process_group): the check runs it again at every "
                            "finite-difference point in the group it made; leave the group to the check")
        first = out[0] if isinstance(out, (list, tuple)) and out else out
        self.loss_copies = _loss_copies(first, self.r.rank)
        self.loss_dtype = getattr(first, "dtype", None)
        if self.is_step:
            return _scalar(out, "the step's returned loss", self.r.rank)
        roots = list(out) if isinstance(out, (list, tuple)) else [out]
        self.roots = len(roots)
        keep = self.r.spec.get("roots")
        if keep is not None and len(roots) > 1:  # shrink.py: fewer backward roots
            roots = [x for i, x in enumerate(roots) if i in keep]
        if not roots:
            raise UserError(f"fn returned an empty list of roots on rank {self.r.rank}")
        total = sum(_scalar(x, f"root {i} of fn" if len(roots) > 1 else "fn's loss", self.r.rank)
                    for i, x in enumerate(roots))
        if backward:
            for i, x in enumerate(roots):
                if not isinstance(x, torch.Tensor) or not x.requires_grad:
                    self.notes.append(f"root {i} does not require grad: no gradient flows from it "
                                      "(a collective without autograd?)")
                    continue
                x.backward(retain_graph=i + 1 < len(roots))
        return total


def _changed(leaves: List[Any], saved: List[Any]) -> Optional[Tuple[str, float]]:
    for leaf, s in zip(leaves, saved):
        d = (leaf.local.detach() - s).abs().max().item() if s.numel() else 0.0
        if d != 0.0:
            return leaf.name, d
    return None


def _compiled_pass(r: Rank, backend: str, fn: Callable[..., Any], ins: Any, saved: List[Any],
                   held: List[Any], mode: str, rng: RngState) -> Dict[str, Any]:
    """fn and backward once more under torch.compile(backend=...): its loss
    and gradients, judged later against the same eager truth. What compiling
    raises is this mode's result, not the check's end."""
    import torch

    from . import inputs

    r.status(f"analytic pass under torch.compile(backend={backend!r})")
    inputs.restore(ins.leaves, saved)
    for l in ins.leaves:
        l.tensor.grad = None
    rng.restore()
    compile_fn = getattr(torch, "compile", None)
    if compile_fn is None:
        return {"error": f"torch {torch.__version__} has no torch.compile (it came with torch 2.0)"}
    counters: Any = getattr(getattr(getattr(torch, "_dynamo", None), "utils", None), "counters", None)
    if counters is not None:
        counters.clear()
    try:
        prog = Program(r, compile_fn(fn, backend=backend), r.spec["step"], ins.kwargs)
        loss = prog.run(backward=True)
        if counters is not None:  # whether the collectives were compiled or ran eagerly beside the graphs
            breaks = sum(counters["graph_break"].values())
            graphs = counters["stats"]["unique_graphs"]
            prog.notes.append(f"under {backend}: dynamo compiled {graphs} graph(s) with {breaks} graph break(s)"
                              + (f" ({'; '.join(sorted(counters['graph_break'])[:3])[:300]})" if breaks else "")
                              + ("" if graphs else ": the function ran eagerly (torch.distributed.nn, for one, "
                                 "refuses compilation)"))
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"[:4000], "traceback": traceback.format_exc()[-4000:]}
    finally:
        inputs.restore(ins.leaves, saved)
    grads, dirs = rank_grads.read_grads(held, mode, r.spec["seed"], rank_grads.optimizer_grads(ins.leaves, []))
    for l in ins.leaves:
        l.tensor.grad = None
    return {"loss": loss, "grads": grads, "dirs": dirs, "notes": prog.notes}


def run(r: Rank) -> RankResult:
    import torch

    from .. import backend as pg
    from collgrad_core import refs
    from . import fd, inputs, placements

    spec = r.spec
    r.status("joining the process group")
    try:
        store, name = r.join()
        device = pg.device(name, r.local_rank)  # the rank's GPU under nccl, else None
    except pg.BackendError as e:  # no such backend, or no GPU for nccl: the arguments, not the machine
        raise UserError(f"backend '{spec['backend']}': {e}") from None
    except Exception as e:
        raise TransportError(f"cannot form the {spec['backend']} process group: {type(e).__name__}: {e}") from e
    r.status("importing the user's code")
    try:
        fn = refs.resolve(spec["fn"])
        make_inputs = refs.resolve(spec["inputs"]) if spec["inputs"] else None
        setup = refs.resolve(spec["setup"]) if spec.get("setup") else None
    except refs.RefError as e:
        raise UserError(str(e)) from None
    if setup is not None:
        r.status("setup")
        _seed(spec["seed"], r.rank)
        setup(r.rank, r.world)
    r.status("make_inputs")
    _seed(spec["seed"], r.rank)
    raw = inputs.transform(make_inputs(r.rank, r.world) if make_inputs else {}, spec.get("transform") or {})
    raw = inputs.place(raw, device)
    rng = RngState()   # what make_inputs left the generators (CUDA's too, once placing started it)
    described = inputs.describe(raw) if spec.get("report_inputs") else {}
    try:
        ins = inputs.prepare(raw, spec["replicated"])
    except inputs.InputError as e:
        raise UserError(f"rank {r.rank}: {e}") from None
    meta: List[TensorMeta] = [{"name": l.name, "shape": list(l.local.shape), "numel": l.local.numel(),
             "replicated": l.replicated, "holders": l.ranks(r.rank, r.world),
             "placements": placements.placements(l.tensor), "mesh": placements.mesh_dims(l.tensor),
             "over": placements.replicated_over(l.tensor) if l.holders else ""} for l in ins.leaves]
    r.status("waiting for the other ranks' inputs")
    import datetime
    try:
        store.set(f"meta/{r.rank}", json.dumps(meta))
        store.wait([f"meta/{k}" for k in range(r.world)], datetime.timedelta(seconds=2 * spec["timeout"] + 10))
        metas = [json.loads(store.get(f"meta/{k}").decode()) for k in range(r.world)]
    except Exception as e:  # the store, not the user's code: another rank gone before its inputs
        raise TransportError(f"exchanging the inputs' shapes through the store: {type(e).__name__}: {e}") from e
    try:
        tensors = fd.logicals(metas)
        mode = fd.choose_mode(spec["fd"], tensors, spec["fd_budget"])
    except fd.FdError as e:
        raise UserError(str(e)) from None
    if not tensors:
        raise UserError("no input requires grad on any rank: nothing to check (make_inputs: "
                        "torch.randn(..., requires_grad=True), or a module with parameters)")
    mine = {l.name: l for l in ins.leaves}
    held = [(t, mine[t.name]) for t in tensors if r.rank in t.holders]
    saved = inputs.snapshot(ins.leaves)
    prog = Program(r, fn, spec["step"], ins.kwargs)

    # the analytic gradient, as the user's code computes it
    r.status("analytic pass (fn and backward)")
    for l in ins.leaves:
        l.tensor.grad = None
    rng.restore()
    with lockstep.counting_backward() as backward_calls:
        analytic_loss = prog.run(backward=True)
    moved = _changed(ins.leaves, saved)
    if moved:
        hint = " (an optimizer.step() in the step? the check reads .grad before any update)" if spec["step"] else ""
        raise UserError(f"the {'step' if spec['step'] else 'function'} changed its input '{moved[0]}' in place "
                        f"on rank {r.rank} (by up to {moved[1]:.3g}){hint}: the check needs every "
                        "evaluation to start from the same point; clone before modifying")
    grad_placements: Dict[str, str] = {}
    grads, dirs = rank_grads.read_grads(held, mode, spec["seed"], rank_grads.optimizer_grads(ins.leaves, prog.notes, grad_placements, finalize=not spec["step"]))
    compiled = {m: _compiled_pass(r, m, fn, ins, saved, held, mode, rng) for m in spec.get("modes") or []
                if m != "eager"}

    # the finite differences: every rank runs every point, perturbing what it holds (lockstep.py)
    base, rounds, lowest, widened = lockstep.finite_differences(r, prog, ins, saved, rng, tensors, mode, held, store)
    if not widened:  # widened, the repeats alone are alike: the analytic pass ran in the code's own precision
        base.insert(0, analytic_loss)
    inputs.restore(ins.leaves, saved)
    for l in ins.leaves:
        l.tensor.grad = None
    r.store = store
    return {"rank": r.rank, "torch": torch.__version__, "backend": name, "mode": mode,
            "meta": meta, "data": ins.data, "grads": grads, "dirs": dirs, "rounds": rounds, "base": base,
            "groups": _group_sizes(), "notes": prog.notes, "inputs": described, "loss_copies": prog.loss_copies,
            "roots": prog.roots, "lowest": lowest, "contract": ins.contract, "backward_calls": backward_calls[0], "compiled": compiled, "grad_placements": grad_placements,
            "values": {t.name: mine[t.name].local.detach().reshape(-1)[:256].tolist() for t, _ in held}}


def run_rank(r: Rank) -> int:
    """Run rank r's part of its check: 0 when its result is written (r.write),
    else the exit status its error (r.fail) explains."""
    t0 = time.monotonic()
    try:
        from collgrad_core import refs
        from . import cuda_on_cpu   # torch: imported once the rank runs

        with cuda_on_cpu.active(bool(r.spec.get("cpu_for_cuda"))):
            result = run(r)
            if r.spec.get("teardown"):   # before the groups go: a framework's state holds its own
                r.status("teardown")
                refs.resolve(r.spec["teardown"])(r.rank, r.world)
    except UserError as e:
        return r.fail(ExitClass.USAGE, str(e), "")
    except SystemExit as e:  # no Exception: it would end this rank without a word, its peers waiting
        return r.fail(ExitClass.USAGE, f"the function called sys.exit({e.code!r}): return the loss instead",
                      traceback.format_exc()[-8000:])
    except Exception as e:  # the user's code raised it (fn, make_inputs, the step), unless the transport did
        text = f"{type(e).__name__}: {e}"
        cls = ExitClass.INFRA if isinstance(e, TransportError) or transport_errors.raised_by_transport(e) else ExitClass.USAGE
        return r.fail(cls, text[:4000], traceback.format_exc()[-8000:])
    result["seconds"] = time.monotonic() - t0
    r.write("json", result)
    return 0


def one_check(spec_path: str, rank: int, serving: bool) -> int:
    """Run one check's rank; 0 when its result is written (the ranks then
    leave together), else the exit status its error file explains."""
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    for p in reversed(spec.get("sys_path", [])):  # the caller's path now (pytest adds to it)
        if p and p not in sys.path:
            sys.path.insert(0, p)
    r = Rank(spec, rank)
    if not serving:  # a warm rank's stacks go to its world's directory (serve)
        stack = open(r.path("stack"), "w", encoding="utf-8")
        faulthandler.register(signal.SIGUSR1, file=stack, all_threads=True)
    code = run_rank(r)
    if code != 0:
        return code
    # leave together: a rank that exits (or destroys its group) closes its connections,
    # and a rank still waiting in a collective would see "connection reset" instead of its hang
    # (a warm rank says "finished" only after that and after its groups are gone: the
    # owner then removes the check's directory, the store with it, and sends the next)
    if not serving:
        r.status("finished")
    r.store.set(f"done/{r.rank}", "1")
    import datetime
    r.store.wait([f"done/{k}" for k in range(r.world)], datetime.timedelta(hours=24))
    if serving:
        import torch.distributed as dist

        dist.destroy_process_group()  # every group of this check, the user's new_group ones too
        dynamo = getattr(getattr(sys.modules.get("torch"), "_dynamo", None), "reset", None)
        if dynamo is not None:  # compiled graphs of this check hold its (now destroyed) groups
            dynamo()
        r.store = None
        r.status("finished")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    faulthandler.enable()  # a fatal signal (a crash in native code) dumps the stacks into the rank's log
    if argv[0] == "--serve":
        from .warm_rank import serve

        code = serve(argv[1], int(argv[2]), one_check)
    else:
        code = one_check(argv[0], int(argv[1]), serving=False)
    if code != 0:
        return code
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # a group whose peer failed may block in its destructor; all is written


if __name__ == "__main__":
    sys.exit(main())
