"""`python -m collgrad_torch check`: the check from a shell, with the API's words.

    python -m collgrad_torch check FILE.py:fn --inputs FILE.py:make_inputs --world 2,4
    python -m collgrad_torch check --step FILE.py:train_step --inputs FILE.py:make_inputs \\
        --replicated model --reduction mean --json report.json --junit junit.xml
    python -m collgrad_torch check F.py:a F.py:b --inputs F.py:make_inputs --world 2,4 --shrink

One check per function and world (several share warm worlds, with a progress
line each on stderr); the table of each on stdout; --shrink reduces each
failing one to a reproduction script. Exit 0 every gradient right, 1 a mismatch, 2 bad usage or a bad function (it raised, its inputs are unusable,
its forward does not repeat), 3 infrastructure (a rank died or hung, the group
could not form, or SIGTERM or SIGINT ended the run: every process it started
is ended, the reports are written with the checks not finished as errors).
"""

import argparse
import contextlib
import os
import re
import sys
import time
from typing import Any, List, Optional, Union

from collgrad_core.exit_class import ExitClass
from collgrad_core import cli_words, interrupt, report
from . import api, shrinking, warm as warm_mod
from collgrad_core.result import Result


def _refuse_outputs(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with where the reports and reproductions go, before any
    check runs (a failing write was found after every check, exit 3), or None."""
    why = cli_words.refuse_reports(args.json, args.junit)
    if why:
        return why
    if args.shrink:
        if not args.shrink_dir or not os.path.isdir(args.shrink_dir):
            return f"--shrink-dir '{args.shrink_dir}': expected an existing directory"
        why = cli_words.trial_file(os.path.join(args.shrink_dir, "collgrad_repro"))
        if why:
            return why
    return None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m collgrad_torch check",
                                description="Check every rank's gradients of your distributed PyTorch code "
                                            "against finite differences of the global loss.")
    p.add_argument("fn", nargs="*", help="FILE.py:NAME or MODULE:NAME of fn(rank, world, **inputs) -> loss "
                                         "(several: each is checked, with the same inputs)")
    p.add_argument("--step", help="FILE.py:NAME of a training step that runs its own backward (instead of fn)")
    p.add_argument("--inputs", help="FILE.py:NAME of make_inputs(rank, world) -> dict")
    p.add_argument("--world", type=_worlds, default=[4],
                   help="world sizes, comma-separated (default 4), or 'launched': every process of the "
                        "torchrun, srun or mpiexec launch this runs under is a rank (docs/launchers.md)")
    p.add_argument("--backend", default="gloo", help="gloo, nccl, mpi, MODULE:NAME or FILE.py:NAME")
    p.add_argument("--semantics", default="auto", choices=["auto", "per_rank", "replicated"],
                   help="per_rank: rank r's truth is d(sum_k L_k)/dx_r; replicated: dL_0/dx_r, one loss every rank "
                        "holds; auto (default): replicated where every rank's loss is the same logical loss")
    p.add_argument("--reduction", default="sum", choices=["sum", "mean"],
                   help="the global loss: the ranks' losses summed (default) or averaged (DDP's mean)")
    p.add_argument("--replicated", action="append", default=[], metavar="NAME",
                   help="an input, or a module input's parameter or submodule by dotted path (model.row.bias), "
                        "that is one logical tensor held by every rank (repeatable)")
    p.add_argument("--atol", type=float, help=f"absolute tolerance (default {api.DEFAULT_ATOL:g}, wider for "
                                              "float16/bfloat16 gradients: docs/user-code.md)")
    p.add_argument("--rtol", type=float, help=f"relative tolerance (default {api.DEFAULT_RTOL:g}, likewise)")
    p.add_argument("--fd", default="auto", choices=["auto", "element", "fast"],
                   help="finite differences element by element, along one random direction per tensor (fast), "
                        "or auto (default): element mode up to --fd-budget elements, fast beyond")
    p.add_argument("--fd-budget", type=int, default=4096, help="element mode up to this many input elements (default 4096)")
    p.add_argument("--seed", type=int, default=0, help="the ranks' random state and fast mode's directions "
                                                        "(default 0)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds without progress that make a hang (default 60)")
    p.add_argument("--name", help="the case's name in the reports (default: the function's reference)")
    p.add_argument("--modes", type=lambda t: [m for m in t.split(",") if m], metavar="M,M",
                   help="also check under torch.compile(backend=M) for each non-eager M "
                        "(e.g. eager,aot_eager,inductor; torch 2.x), every mode against the eager truth")
    p.add_argument("--cpu-for-cuda", action="store_true",
                   help="run code written for GPUs on CPU ranks: CUDA device arguments, .cuda(), "
                        "torch.cuda.current_device() and set_device() made CPU (cuda_on_cpu.py)")
    p.add_argument("--setup", metavar="FILE.py:NAME", help="setup(rank, world) on every rank before make_inputs "
                   "(a framework's state: Megatron's initialize_model_parallel)")
    p.add_argument("--teardown", metavar="FILE.py:NAME", help="teardown(rank, world) on every rank after the check "
                   "(Megatron's destroy_model_parallel), so the next check in a warm world starts clean")
    p.add_argument("--shrink", action="store_true",
                   help="shrink each failing check to a small reproduction and write its script")
    p.add_argument("--shrink-budget", type=cli_words.seconds, default=60.0, metavar="SEC", help="seconds per shrink (60)")
    p.add_argument("--shrink-dir", default=".", metavar="DIR", help="where the reproduction scripts go (.)")
    p.add_argument("--cold", action="store_true",
                   help="fresh rank processes for every check (default: one warm world per world size)")
    p.add_argument("--json", metavar="FILE", help="write the report (schema collgrad-check/report/1)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    return p


def _worlds(text: str) -> List[Union[int, str]]:
    return ["launched"] if text == "launched" else list(cli_words.worlds(text))


def _progress(done: int, total: int, r: Result, t0: float) -> None:
    """One line per check on stderr when there are several: the count and the time left."""
    spent = time.monotonic() - t0
    left = spent / done * (total - done)
    print(f"[{done}/{total}] {r.name} W={r.world}: {r.status} ({spent:.1f} s so far, about {left:.0f} s left)",
          file=sys.stderr, flush=True)


def _shrink(args: argparse.Namespace, fn: Optional[str], world: int) -> None:
    s = shrinking.shrink(fn, world=world, inputs=args.inputs, step=args.step, budget=args.shrink_budget,
                          backend=args.backend, semantics=args.semantics, atol=args.atol, rtol=args.rtol,
                          fd=args.fd, seed=args.seed, timeout=args.timeout, reduction=args.reduction,
                          replicated=args.replicated, fd_budget=args.fd_budget)
    print(s.summary())
    if s.script:
        stem = re.sub(r"[^A-Za-z0-9_]+", "_", (fn or args.step or "").rsplit(":", 1)[-1])
        path = os.path.join(args.shrink_dir, f"collgrad_repro_{stem}_w{world}.py")
        try:
            report.write_text(path, s.script)
        except OSError as e:
            print(f"python -m collgrad_torch check: cannot write the reproduction {path}: {e}", file=sys.stderr)
            return
        print(f"  reproduction: python {path}")


def main(argv: Optional[List[str]] = None) -> int:
    p = parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return ExitClass.PASS if e.code == 0 else ExitClass.USAGE
    if bool(args.fn) == (args.step is not None):
        p.print_usage(sys.stderr)
        print("python -m collgrad_torch check: give a function FILE.py:NAME or --step FILE.py:NAME, not both",
              file=sys.stderr)
        return ExitClass.USAGE
    why = _refuse_outputs(args)
    if why:
        print(f"python -m collgrad_torch check: {why}", file=sys.stderr)
        return ExitClass.USAGE
    fns: List[Optional[str]] = list(args.fn) if args.fn else [None]
    if args.world == ["launched"]:
        return _launched(args, fns)
    jobs = [(fn, world) for fn in fns for world in args.world]
    results: List[Result] = []
    t0 = time.monotonic()
    warm: Any = None if args.cold or len(jobs) == 1 and not args.shrink else warm_mod.warm_worlds()
    try:
        with interrupt.raising(), warm if warm is not None else contextlib.nullcontext():
            for fn, world in jobs:
                try:
                    r = api.check(fn, world=world, inputs=args.inputs, backend=args.backend,
                                  semantics=args.semantics, atol=args.atol, rtol=args.rtol, fd=args.fd,
                                  seed=args.seed, timeout=args.timeout, step=args.step, reduction=args.reduction,
                                  replicated=args.replicated, fd_budget=args.fd_budget, name=args.name,
                                  modes=args.modes, cpu_for_cuda=args.cpu_for_cuda, setup=args.setup,
                                  teardown=args.teardown)
                except api.CheckError as e:
                    print(f"python -m collgrad_torch check: {e}", file=sys.stderr)
                    return ExitClass.USAGE
                print(r.table(), flush=True)
                results.append(r)
                if args.shrink and r.status == "fail":
                    _shrink(args, fn, world)
                if len(jobs) > 1:
                    _progress(len(results), len(jobs), r, t0)
    except interrupt.Interrupted as e:
        # every process the checks started is ended and their files removed (the finally blocks on the way)
        for i, (fn, world) in enumerate(jobs[len(results):]):
            results.append(_interrupted(args, fn, world, e.words() + (" during the check" if i == 0 else ""),
                                        started=i == 0))
        print(f"python -m collgrad_torch check: {e.words()}: every process the check started is ended; "
              f"{len(jobs) - sum(r.error is None for r in results)} of {len(jobs)} checks not finished",
              file=sys.stderr, flush=True)
    return cli_words.finish("python -m collgrad_torch check", results, args.json, args.junit,
                            "a rank died or hung, or a signal")


def _launched(args: argparse.Namespace, fns: List[Optional[str]]) -> int:
    """Every function checked on the launched world this process is a rank of
    (launched.py): rank 0 prints the tables and writes the reports, every rank
    ends with the same exit status. A check that cannot finish ends every
    process there, its table and the reports written first."""
    from . import launched

    if args.shrink or args.modes:
        print("python -m collgrad_torch check: --world launched checks as launched; --shrink and --modes "
              "need worlds of their own (run them spawned)", file=sys.stderr)
        return ExitClass.USAGE
    prog = "python -m collgrad_torch check"
    results: List[Result] = []

    def aborted(r: Result) -> None:   # rank 0, before every process ends with r's class
        print(r.table(), flush=True)
        cli_words.finish(prog, results + [r], args.json, args.junit, "a rank was lost, failed to run or hung")

    with launched.reporting_aborts(aborted):
        for fn in fns:
            try:
                r = api.check(fn, world="launched", inputs=args.inputs, backend=args.backend,
                              semantics=args.semantics, atol=args.atol, rtol=args.rtol, fd=args.fd, seed=args.seed,
                              timeout=args.timeout, step=args.step, reduction=args.reduction,
                              replicated=args.replicated, fd_budget=args.fd_budget, name=args.name,
                              cpu_for_cuda=args.cpu_for_cuda, setup=args.setup, teardown=args.teardown)
            except api.CheckError as e:
                print(f"{prog}: {e}", file=sys.stderr)
                return ExitClass.USAGE
            results.append(r)
            if launched.place().rank == 0:
                print(r.table(), flush=True)
    if launched.place().rank == 0:
        return cli_words.finish(prog, results, args.json, args.junit, "a rank was lost, failed to run or hung")
    return cli_words.exit_status(results)


def _interrupted(args: argparse.Namespace, fn: Optional[str], world: int, why: str, started: bool) -> Result:
    """The result of a check a signal ended (started) or kept from starting."""
    r, _ = api.plan(fn, world, args.inputs, args.backend, args.semantics, args.atol, args.rtol, args.fd, args.seed,
                    args.timeout, step=args.step, reduction=args.reduction, replicated=args.replicated,
                    fd_budget=args.fd_budget, name=args.name, roots=None, modes=args.modes)
    r.error, r.error_class = why if started else f"not run: {why}", ExitClass.INFRA
    return r
