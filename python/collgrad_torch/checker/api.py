"""The public API: check(), assert_gradients(), and the errors they raise."""

import dataclasses
import time
from typing import Any, List, Optional, Sequence, Tuple, Union

from collgrad_core.exit_class import ExitClass
from . import fd as fdmod
from . import judge as judgemod
from collgrad_core import cli_words, options, refs
from . import warm as warmmod, world as worldmod
from collgrad_core.errors import CheckError, GradientMismatch
from .launched_env import LaunchError
from collgrad_core.options import FdMode, Reduction, Semantics
from collgrad_core.result import Result
from .messages import RankResult, Spec
from .check_options import CheckOptions, Fn


def check(fn: Optional[Fn] = None, *, world: Union[int, str] = 4, inputs: Optional[Fn] = None, backend: str = "gloo",
          semantics: Semantics = "auto", atol: Optional[float] = None, rtol: Optional[float] = None,
          fd: FdMode = "auto", seed: int = 0, timeout: float = 60.0, step: Optional[Fn] = None,
          reduction: Reduction = "sum", replicated: Union[bool, Sequence[str]] = (), fd_budget: int = 4096,
          python: Optional[str] = None, name: Optional[str] = None,
          roots: Optional[Sequence[int]] = None, modes: Optional[Sequence[str]] = None,
          cpu_for_cuda: bool = False, setup: Optional[Fn] = None, teardown: Optional[Fn] = None) -> Result:
    """Check every rank's gradients of `fn` (or of a training `step`) against
    central finite differences of the global loss.

    fn(rank, world, **make_inputs(rank, world)) runs in each of `world` fresh
    processes inside an initialised process group of `backend` ("gloo",
    "nccl", "mpi", or MODULE:NAME / FILE.py:NAME registering a third-party
    one) and returns a scalar loss, or a list of scalar roots backward-ed in
    order. With step=train_step instead, the step runs its own forward,
    backward and gradient synchronisation and returns the local loss; the
    check reads .grad afterwards.

    The truth for rank r's input x_r is d(sum_k L_k)/d x_r (per-rank
    semantics; reduction="mean" divides by the world), for a replicated input
    d(global loss)/d theta with every copy perturbed together.
    semantics="replicated" checks d L_0/d x_r instead (defined only when every
    rank's loss is the same function); "auto" judges per-rank and names a
    result that is right under replicated semantics only, save where the loss
    is a DTensor, whose placements say what it is (Replicate on every rank:
    one logical loss, replicated semantics; Replicate over a subgroup: one
    loss per group; Partial: the sum of the parts). fd="element"
    perturbs each element (the default while the inputs have at most
    fd_budget elements in all), "fast" one random direction per tensor.

    modes=["eager", "aot_eager", "inductor"] runs fn's analytic pass as it
    is and under torch.compile(backend=MODE) for each other mode (torch 2.x),
    and checks every mode's gradients against the same finite-difference
    truth (computed in eager): the Result is the first mode's, with the others
    in .modes, and .ok only when every mode is right; a mode that fails to
    compile or run is that mode's error.

    roots=[i, ...] backward-s only those of fn's returned roots (a
    reproduction that shrink() cut down).

    setup(rank, world) runs on every rank once its process group is formed,
    before make_inputs; teardown(rank, world) after the check's last
    evaluation, before the check's groups are destroyed: a framework's own
    state (Megatron's parallel_state.initialize_model_parallel and
    destroy_model_parallel), so checks in one warm world give what cold ones
    give. Passed by reference, as fn is.

    world="launched" checks inside the world a launcher made (torchrun on
    one node or several, srun, mpiexec: every process of the launch calls
    check() alike, or runs `python -m collgrad_torch check --world launched`),
    or, called after the script's own init_process_group, inside its default
    group: nothing is spawned, rank 0 judges, and every rank returns its
    Result; a check that cannot finish (a rank raised, was lost or hung) ends
    every process with its exit status (launched.py, docs/launchers.md).

    `name` is the case's name in the reports (default: the function's
    reference): two reports of one name, say before and after a fix or over
    two backends, line up in `collgrad-check compare`.

    Functions are passed by reference (module-level functions, or
    "FILE.py:NAME" strings): the ranks import them. Returns a Result;
    bad arguments raise CheckError before anything starts, and what goes
    wrong while running (the function raised, a rank hung) is the Result's
    error, with its class (2: the code, 3: infrastructure).
    """
    opts = CheckOptions(world=world, inputs=inputs, backend=backend, semantics=semantics, atol=atol, rtol=rtol,
                        fd=fd, seed=seed, timeout=timeout, step=step, reduction=reduction, replicated=replicated,
                        fd_budget=fd_budget, python=python, name=name, roots=roots, modes=modes,
                        cpu_for_cuda=cpu_for_cuda, setup=setup, teardown=teardown)
    return run(fn, opts)


def run(fn: Optional[Fn], opts: CheckOptions) -> Result:
    """check() on options made elsewhere (the CLI's, the pytest marker's)."""
    result, spec = plan(fn, opts)
    return execute(result, spec, opts.python)


def plan(fn: Optional[Fn], opts: CheckOptions) -> Tuple[Result, Spec]:
    """check()'s arguments checked (CheckError), once, and made into an
    empty Result and the spec the ranks read."""
    opts = opts.validated()
    step, world, inputs, name = opts.step, opts.world, opts.inputs, opts.name
    if (fn is None) == (step is None):
        raise CheckError("give exactly one of fn (we run backward) and step (it runs its own backward)")
    target = step if step is not None else fn
    try:
        ref = refs.ref_of(target, "step" if step is not None else "fn")  # type: ignore[arg-type]
        inputs_ref = refs.ref_of(inputs, "inputs") if inputs is not None else ""
        hooks = {h: refs.ref_of(f, h) if f is not None else ""
                 for h, f in (("setup", opts.setup), ("teardown", opts.teardown))}
    except refs.RefError as e:
        raise CheckError(str(e)) from None
    launched = world == "launched"
    try:
        if launched:
            from . import launched as launchedmod

            world = launchedmod.place().world
        else:
            worldmod.refuse_world(world)  # type: ignore[arg-type]
    except (worldmod.WorldError, LaunchError) as e:
        raise CheckError(str(e)) from None
    assert isinstance(world, int)
    atol, rtol, replicated, roots = opts.atol, opts.rtol, opts.replicated, opts.roots
    result = Result(name=name or ref, ref=ref, world=world, backend=opts.backend,
                    kind="step" if step is not None else "fn", semantics=opts.semantics, reduction=opts.reduction,
                    seed=opts.seed, atol=options.DEFAULT_ATOL if atol is None else atol,
                    rtol=options.DEFAULT_RTOL if rtol is None else rtol)
    spec: Spec = {"fn": refs.absolute(ref), "inputs": refs.absolute(inputs_ref) if inputs_ref else "",
                  "step": step is not None, "world": world, "backend": opts.backend,
                  "seed": opts.seed, "fd": opts.fd, "fd_budget": opts.fd_budget, "step_size": fdmod.STEP,
                  "atol": result.atol, "rtol": result.rtol, "tolerance_given": atol is not None or rtol is not None,
                  "replicated": replicated if isinstance(replicated, bool) else list(replicated),
                  "timeout": opts.timeout, "transform": {}, "roots": None if roots is None else [int(i) for i in roots],
                  "report_inputs": False, "modes": list(opts.modes) if opts.modes else [],
                  "cpu_for_cuda": bool(opts.cpu_for_cuda), "setup": refs.absolute(hooks["setup"]) if hooks["setup"] else "",
                  "teardown": refs.absolute(hooks["teardown"]) if hooks["teardown"] else "",
                  "launched": launched}
    return result, spec


def execute(result: Result, spec: Spec, python: Optional[str] = None) -> Result:
    """Run the check a spec describes (check() builds both; shrink.py runs
    variants of one: another world, cut inputs, fewer roots) into `result`."""
    if spec.get("launched"):
        return _execute_launched(result, spec)
    timeout = spec["timeout"]
    t0 = time.monotonic()
    pool = warmmod.active()
    w = worldmod.World(spec, timeout, python, parent_dir=pool.tmpdir if pool is not None else None)
    result.isolation = w.isolation
    try:
        ranks = pool.run(w) if pool is not None else w.run()
    except worldmod.WorldError as e:
        result.error, result.error_class = str(e), e.error_class
        ranks = []
    return judged(result, spec, ranks, t0)


def judged(result: Result, spec: Spec, ranks: Sequence[RankResult], t0: float) -> Result:
    """Every rank's result judged into `result` (the check's, or the first
    compile mode's with the others in .modes); none: the error it holds."""
    if ranks:
        result.torch_version = ranks[0].get("torch", "")
        result.backend = ranks[0].get("backend", spec["backend"])
        result.rank_inputs = [r.get("inputs") or {} for r in ranks]
        result.roots = int(ranks[0].get("roots", 1))
        from . import precision   # torch: imported in the parent only once ranks ran

        precision.dtype_tolerance([r.get("lowest") for r in ranks], bool(spec.get("tolerance_given")), result)
    if ranks and not spec.get("modes"):
        _judge(ranks, result)
    elif ranks:
        heads = [_judge_mode(ranks, result, m) for m in spec["modes"]]
        result = heads[0]
        result.modes = heads[1:]
    result.seconds = time.monotonic() - t0
    for m in result.modes:
        m.seconds = result.seconds
    return result


def _execute_launched(result: Result, spec: Spec) -> Result:
    """The check on the launched world this process is a rank of (launched.py)."""
    from . import launched

    t0 = time.monotonic()

    def judge(ranks: List[RankResult]) -> Tuple[Result, int]:
        r = judged(result, spec, ranks, t0)
        return r, int(cli_words.exit_status([r]))

    def abort(message: str, code: int) -> Result:
        result.error, result.error_class, result.seconds = message, code, time.monotonic() - t0
        launched.on_abort(result)
        return result

    try:
        return launched.run(spec, judge, abort)
    except LaunchError as e:
        raise CheckError(str(e)) from None


def _judge(ranks: Sequence[RankResult], result: Result) -> None:
    try:
        judgemod.judge(ranks, result)
    except (judgemod.Refused, fdmod.FdError) as e:
        result.error, result.error_class = str(e), ExitClass.USAGE


def _judge_mode(ranks: Sequence[RankResult], base: Result, mode: str) -> Result:
    """One compile mode's gradients against the eager truth."""
    r = dataclasses.replace(base, name=f"{base.name} [{mode}]", mode=mode, checks=[], notes=[], modes=[])
    if mode == "eager":
        _judge(ranks, r)
        return r
    runs = [res["compiled"][mode] for res in ranks]
    failed = [(res["rank"], c) for res, c in zip(ranks, runs) if "error" in c]
    if failed:
        r.error = "\n".join(f"rank {k} under torch.compile(backend={mode!r}): {c['error']}" for k, c in failed)
        r.error = r.error + "\n" + failed[0][1].get("traceback", "").rstrip()
        r.error_class = ExitClass.USAGE
        return r
    moded: List[RankResult] = []
    for res, c in zip(ranks, runs):  # the mode's gradients, with the eager run's losses
        m = res.copy()
        m["grads"], m["dirs"], m["notes"] = c["grads"], c["dirs"], res.get("notes", []) + c.get("notes", [])
        moded.append(m)
    _judge(moded, r)
    for res, c in zip(ranks, runs):
        eager = res["base"][0]
        if abs(c["loss"] - eager) > r.atol + r.rtol * abs(eager):
            r.notes.append(f"rank {res['rank']}: the loss under {mode} is {c['loss']:.9g}, eager {eager:.9g}: "
                           "the forward differs too")
    return r


def assert_gradients(fn: Optional[Fn] = None, **kwargs: Any) -> Result:
    """check(), raising GradientMismatch (its message the table) unless every gradient is right."""
    result = check(fn, **kwargs)
    if not result.ok:
        raise GradientMismatch(result)
    return result
