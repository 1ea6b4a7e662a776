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
import dataclasses
import os
import re
import sys
import time
from typing import Any, List, Optional, Union

from collgrad_core.exit_class import ExitClass
from collgrad_core import cli_words, interrupt, options, report
from . import api, check_options, shrinking, warm as warm_mod
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
    for f in check_options.fields("cli"):
        flag = "--" + f.name.replace("_", "-")
        extra = dict(f.metadata.get("cli") or {})
        p.add_argument(flag, default=extra.pop("default", f.default), help=options.help_line(f), **extra)
    p.add_argument("--world", type=_worlds, default=[4], help=options.help_line(_field("world")))
    p.add_argument("--shrink", action="store_true",
                   help="shrink each failing check to a small reproduction and write its script")
    p.add_argument("--shrink-budget", type=cli_words.seconds, default=60.0, metavar="SEC", help="seconds per shrink (60)")
    p.add_argument("--shrink-dir", default=".", metavar="DIR", help="where the reproduction scripts go (.)")
    p.add_argument("--cold", action="store_true",
                   help="fresh rank processes for every check (default: one warm world per world size)")
    p.add_argument("--json", metavar="FILE", help="write the report (schema collgrad-check/report/1)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    return p


def _field(name: str) -> "dataclasses.Field[Any]":
    return next(f for f in dataclasses.fields(check_options.CheckOptions) if f.name == name)


def _options(args: argparse.Namespace, world: Union[int, str]) -> check_options.CheckOptions:
    """The check's options from the command line, with one of its worlds."""
    return check_options.CheckOptions(world=world, **{f.name: getattr(args, f.name)
                                                      for f in check_options.fields("cli")})


def _worlds(text: str) -> List[Union[int, str]]:
    return ["launched"] if text == "launched" else list(cli_words.worlds(text))


def _progress(done: int, total: int, r: Result, t0: float) -> None:
    """One line per check on stderr when there are several: the count and the time left."""
    spent = time.monotonic() - t0
    left = spent / done * (total - done)
    print(f"[{done}/{total}] {r.name} W={r.world}: {r.status} ({spent:.1f} s so far, about {left:.0f} s left)",
          file=sys.stderr, flush=True)


def _shrink(args: argparse.Namespace, fn: Optional[str], world: int) -> None:
    s = shrinking.shrink_options(fn, _options(args, world), budget=args.shrink_budget)
    print(s.summary())
    if s.script:
        stem = re.sub(r"[^A-Za-z0-9_]+", "_", (fn or args.step or "").rsplit(":", 1)[-1])
        path = os.path.join(args.shrink_dir, f"collgrad_repro_{stem}_w{world}.py")
        try:
            report.write_text(path, s.script)
        except OSError as e:
            print(f"python -m collgrad_torch check: cannot write the reproduction {path}: {e}", file=sys.stderr)
            return
        print(f"  reproduction: {sys.executable} {os.path.abspath(path)}")


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
    # warm worlds of its own, unless it runs inside someone's (main() called in a warm_worlds() block)
    own = not args.cold and (len(jobs) > 1 or args.shrink) and warm_mod.active() is None
    warm: Any = warm_mod.warm_worlds() if own else None
    try:
        with interrupt.raising(), warm if warm is not None else contextlib.nullcontext():
            for fn, world in jobs:
                try:
                    r = api.run(fn, _options(args, world))
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
                r = api.run(fn, _options(args, "launched"))
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
    r, _ = api.plan(fn, _options(args, world))
    r.error, r.error_class = why if started else f"not run: {why}", ExitClass.INFRA
    return r
