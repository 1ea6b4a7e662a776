"""The words both checks' command lines share (python -m collgrad_torch check,
python -m collgrad_jax check): world lists, seconds, where the reports go, and
the exit status of a run of checks. No torch here: the JAX check imports it."""

import argparse
import math
import os
import sys
from typing import List, Optional, Sequence

from collgrad_core.exit_class import ExitClass
from collgrad_core.result import Result


def worlds(text: str) -> List[int]:
    """--world's list: distinct positive sizes, comma-separated."""
    try:
        sizes = [int(w) for w in text.split(",") if w.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of world sizes, got '{text}'") from None
    if not sizes or any(w < 1 for w in sizes):
        raise argparse.ArgumentTypeError(f"world sizes must be positive integers, got '{text}'")
    if len(set(sizes)) != len(sizes):  # each would run, and report, the same check twice
        raise argparse.ArgumentTypeError(f"world sizes must be distinct, got '{text}'")
    return sizes


def seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not 0 <= v < math.inf:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds >= 0, got '{text}'")
    return v


def trial_file(path: str) -> Optional[str]:
    """Why no file can be written at path (its directory missing, or taking no
    new file: tried with a temporary one, made and removed), or None."""
    trial = f"{path}.trial{os.getpid()}"
    try:
        with open(trial, "x", encoding="utf-8"):
            pass
        os.unlink(trial)
    except OSError as e:
        return f"{path}: cannot write there: {e.strerror or e}"
    return None


def refuse_reports(json_path: Optional[str], junit_path: Optional[str]) -> Optional[str]:
    """What is wrong with where --json and --junit write, before any check
    runs, or None."""
    for opt, path in (("--json", json_path), ("--junit", junit_path)):
        if path is None:
            continue
        if not path:
            return f"{opt} '': expected a file name"
        if os.path.isdir(path):
            return f"{opt} {path}: is a directory; a report needs a file name"
        why = trial_file(path)
        if why:
            return why
    if json_path and junit_path and os.path.realpath(json_path) == os.path.realpath(junit_path):
        return f"--json {json_path} and --junit {junit_path} would write to the same file; give each its own"
    return None


def exit_status(results: Sequence[Result]) -> ExitClass:
    """INFRA a check that could not run for the infrastructure, USAGE for the
    code, FAIL a wrong gradient, PASS all right; every compile mode counts."""
    results = [m for r in results for m in r.all()]
    errors = [r.error_class for r in results if r.error is not None]
    if errors:
        return ExitClass.INFRA if ExitClass.INFRA in errors else ExitClass.USAGE
    return ExitClass.PASS if all(r.ok for r in results) else ExitClass.FAIL


def finish(prog: str, results: Sequence[Result], json_path: Optional[str], junit_path: Optional[str],
           infra: str) -> ExitClass:
    """The end of a command line's run: the reports written (a failed write is
    INFRA), the count line printed, the exit status returned. `infra` says
    what infrastructure means for this check ("a rank died or hung")."""
    from collgrad_core import report

    try:
        if json_path:
            report.write_json(json_path, results)
        if junit_path:
            report.write_junit(junit_path, results)
    except OSError as e:
        print(f"{prog}: cannot write the report: {e}", file=sys.stderr)
        return ExitClass.INFRA
    status = exit_status(results)
    unsure = sum(r.status == "inconclusive" for r in results)
    print(f"{sum(r.status == 'pass' for r in results)} of {len(results)} checks passed"
          + (f", {unsure} inconclusive (the finite differences cannot resolve them: no gradient found wrong)"
             if unsure else "")
          + {ExitClass.PASS: "", ExitClass.FAIL: ": wrong gradients",
             ExitClass.USAGE: ": the function or its inputs are at fault",
             ExitClass.INFRA: f": infrastructure ({infra})"}[status])
    return status
