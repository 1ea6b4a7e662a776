"""`python -m collgrad_jax check`: the JAX check from a shell.

    python -m collgrad_jax check FILE.py:make_loss --inputs FILE.py:make_inputs --world 2,4
    python -m collgrad_jax check F.py:a F.py:b --inputs F.py:make_inputs --json report.json --junit junit.xml

One check per function and world, each in a fresh device process; the
table of each on stdout. Exit 0 every gradient right, 1 a wrong gradient,
2 bad usage or a bad function (it raised, JAX cannot differentiate it, its
loss has the wrong shape, its forward does not repeat), 3 infrastructure
(jax missing, the device process died or hung).
"""

import argparse
import sys
from typing import Dict, List, Optional

from collgrad_core import cli_words, interrupt
from collgrad_core.result import Result
from collgrad_core.exit_class import ExitClass

from . import api

PROG = "python -m collgrad_jax check"


def _mesh(text: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for part in text.split(","):
        name, _, size = part.partition("=")
        if not name.strip().isidentifier() or not size.strip().isdigit() or int(size) < 1 or name.strip() in out:
            raise argparse.ArgumentTypeError(f"expected NAME=SIZE,... with distinct names and sizes >= 1 "
                                             f"(dp=2,tp=2), got '{text}'")
        out[name.strip()] = int(size)
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Check every device's block of jax.grad of your shard_map "
                                                      "code's global loss against finite differences.")
    p.add_argument("make_loss", nargs="+", help="FILE.py:NAME or MODULE:NAME of make_loss(mesh) -> f "
                                                "(several: each is checked, with the same inputs)")
    p.add_argument("--inputs", required=True, help="FILE.py:NAME of make_inputs(world) -> dict of global arrays")
    p.add_argument("--world", type=cli_words.worlds, default=None,
                   help="device counts of a 1-D mesh (axis 'i'), comma-separated (default 4)")
    p.add_argument("--mesh", type=_mesh, default=None, metavar="NAME=SIZE,...",
                   help="a mesh of named axes instead, row-major: dp=2,tp=2")
    p.add_argument("--reduction", default="sum", choices=["sum", "mean"],
                   help="the global loss from per-device losses: their sum or mean")
    p.add_argument("--atol", type=float)
    p.add_argument("--rtol", type=float)
    p.add_argument("--fd", default="auto", choices=["auto", "element", "fast"])
    p.add_argument("--fd-budget", type=int, default=4096, help="element mode up to this many input elements")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--vma", default="both", choices=["both", "as_written"],
                   help="also run with each shard_map's check_vma flipped (both), or not")
    p.add_argument("--processes", type=int, default=1, metavar="P",
                   help="spread the devices over P processes joined by jax.distributed, a multi-host program "
                        "on this machine (default 1: one process holds every device)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds a device process may take")
    p.add_argument("--name", help="the case's name in the reports (default: the function's reference)")
    p.add_argument("--json", metavar="FILE", help="write the report (schema collgrad-check/report/1)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "check":
        usage = f"usage: {PROG} FILE.py:make_loss --inputs FILE.py:make_inputs [options]  (check --help)"
        if args[:1] in (["-h"], ["--help"]):   # asked for: the answer, on stdout
            print(usage)
            return ExitClass.PASS
        print((f"python -m collgrad_jax: unknown command '{args[0]}'\n" if args else "") + usage, file=sys.stderr)
        return ExitClass.USAGE
    p = parser()
    try:
        ns = p.parse_args(args[1:])
    except SystemExit as e:
        return ExitClass.PASS if e.code == 0 else ExitClass.USAGE
    why = cli_words.refuse_reports(ns.json, ns.junit)
    if why:
        print(f"{PROG}: {why}", file=sys.stderr)
        return ExitClass.USAGE
    if ns.mesh is not None and ns.world is not None:
        print(f"{PROG}: give --world or --mesh, not both", file=sys.stderr)
        return ExitClass.USAGE
    worlds: List[Optional[int]] = [None] if ns.mesh is not None else (ns.world or [4])
    results: List[Result] = []
    jobs = [(fn, world) for fn in ns.make_loss for world in worlds]
    try:
        with interrupt.raising():   # SIGTERM, SIGINT: the device process ends (devices.run), the reports are written
            for fn, world in jobs:
                try:
                    r = api.check(fn, world=world, mesh=ns.mesh, inputs=ns.inputs, fd=ns.fd, fd_budget=ns.fd_budget,
                                  reduction=ns.reduction, atol=ns.atol, rtol=ns.rtol, seed=ns.seed, vma=ns.vma,
                                  timeout=ns.timeout, name=ns.name, processes=ns.processes)
                except api.CheckError as e:
                    print(f"{PROG}: {e}", file=sys.stderr)
                    return ExitClass.USAGE
                print(r.table(), flush=True)
                results.append(r)
    except interrupt.Interrupted as e:
        for i, (fn, world) in enumerate(jobs[len(results):]):
            r, _ = api.plan(fn, world=world, mesh=ns.mesh, inputs=ns.inputs, fd=ns.fd, fd_budget=ns.fd_budget,
                            reduction=ns.reduction, atol=ns.atol, rtol=ns.rtol, seed=ns.seed, vma=ns.vma,
                            timeout=ns.timeout, name=ns.name)
            r.error, r.error_class = (e.words() + " during the check" if i == 0 else f"not run: {e.words()}",
                                      ExitClass.INFRA)
            results.append(r)
        print(f"{PROG}: {e.words()}: the device process is ended", file=sys.stderr, flush=True)
    return int(cli_words.finish(PROG, results, ns.json, ns.junit,
                                "jax missing, a device process died or hung, or a signal"))
