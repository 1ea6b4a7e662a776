"""The check's results in the C tool's formats: a JSON report of schema
collgrad-check/report/1 (reports/schema/report-1.schema.json; `collgrad-check
compare` reads it) and JUnit XML (junit-10). One case per Result: the
function's reference at one world; one check per rank and tensor, against the
finite-difference truth. Files are written whole to a temporary name and
renamed, so a reader never sees half a report."""

import contextlib
import json
import math
import os
import socket
import sys
import time
from typing import Any, Dict, List, Optional, Sequence
from xml.sax.saxutils import quoteattr, escape

from collgrad_core.exit_class import ExitClass
from collgrad_core import patterns
from collgrad_core.result import Result, TensorCheck

VERSION = "0.1.0"
SHOWN = 256  # the schema's maxItems for expected / observed


def _num(v: float) -> Optional[float]:
    return v if math.isfinite(v) else None


def _ulps(o: float, t: float) -> float:
    if not (math.isfinite(o) and math.isfinite(t)):
        return math.inf
    return abs(o - t) / math.ulp(t) if t != 0 else (0.0 if o == 0 else math.inf)


def _check(c: TensorCheck, r: Result) -> Dict[str, Any]:
    semantics = "replicated" if r.semantics == "replicated" else "per_rank"
    out: Dict[str, Any] = {
        "tensor": c.tensor, "rank": c.rank, "semantics": semantics, "rules": None,
        "against": "finite_difference", "numel": c.numel,
        "expected": [_num(v) for v in c.truth[:SHOWN]], "observed": [_num(v) for v in c.observed[:SHOWN]],
        "max_abs_err": _num(c.max_abs_err), "max_rel_err": _num(c.max_rel_err),
        "max_ulp": _num(max((_ulps(o, t) for o, t in zip(c.observed, c.truth)), default=0.0)),
        "first_bad_index": c.first_bad, "status": c.status,
        # the finite differences' own error: the largest bound over the elements, at the largest step used
        "fd_error": {"bound": _num(c.fd_bound), "step": _num(c.fd_step)}}
    if c.numel > SHOWN:
        out["truncated"] = True
    if c.first_bad >= 0:
        out["first_bad_expected"] = _num(c.truth[c.first_bad])
        out["first_bad_observed"] = _num(c.observed[c.first_bad])
    if c.placements:
        out["placements"] = c.placements
    note = [c.note] if c.note else []
    if not c.ok:
        note += c.patterns
    if note:
        out["note"] = "; ".join(note)
    return out


def _diagnosis(r: Result) -> Optional[Dict[str, Any]]:
    found: List[str] = []
    for c in r.checks:
        for p in ([] if c.ok else c.patterns):
            if p not in found:
                found.append(p)
    if not found:
        return None
    return {"matches": list(dict.fromkeys(patterns.key(p) for p in found)), "explanation": "; ".join(found),
            "see": "design.md section 14; pytorch/pytorch#58005"}


def case(r: Result) -> Dict[str, Any]:
    where = r.ref.rsplit(":", 1)[0]
    out: Dict[str, Any] = {
        "name": r.name, "file": where if where.endswith(".py") else None,
        "source": f"{_api([r])} of {r.ref} ({r.kind}; {r.semantics} semantics, reduction {r.reduction}, "
                  f"fd {r.fd or '-'}, seed {r.seed})",
        "world": r.world, "rules": None, "status": r.status, "duration_s": max(0.0, r.seconds),
        "replicated": {"defined": r.replicated_defined, "reason": r.replicated_reason or None},
        "finite_difference": {"status": "skip", "max_rel_err": None, "tolerance": _num(r.rtol),
                              "reason": "the truth itself is central finite differences of the global loss"},
        "checks": [_check(c, r) for c in r.checks]}
    if r.error is not None:
        out["message"] = r.error
        out["error_class"] = int(r.error_class if r.error_class in (ExitClass.USAGE, ExitClass.INFRA) else ExitClass.INFRA)
    d = _diagnosis(r)
    if d:
        out["diagnosis"] = d
    if r.notes:
        out["warnings"] = list(r.notes)
    return out


def to_json(results: Sequence[Result]) -> Dict[str, Any]:
    results = [x for r in results for x in r.all()]  # a compile mode is a case of its own
    first = results[0] if results else None
    backend = first.backend if first else None
    return {
        "schema": "collgrad-check/report/1",
        "tool": {"name": "collgrad-check", "version": VERSION},
        "host": socket.gethostname(),
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "mode": "distributed", "transport": backend, "rules": None,
        "device": "cuda" if backend == "nccl" else "cpu",
        "framework": {"name": first.framework if first else "pytorch", "version": (first.version or None) if first else None,
                      "api": "check", "backend": backend, "python": sys.executable,
                      "isolation": first.isolation if first else None},
        "cases": [case(r) for r in results],
        "summary": {"passed": sum(r.status == "pass" for r in results),
                    "failed": sum(r.status == "fail" for r in results),
                    "errors": sum(r.status == "error" for r in results), "skipped": 0,
                    "inconclusive": sum(r.status == "inconclusive" for r in results)}}


def write_text(path: str, text: str) -> None:
    """path's text, whole or not at all; OSError naming path (not the temporary name)."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OSError(e.errno, f"{path}: {e.strerror or e}") from None


def write_json(path: str, results: Sequence[Result]) -> None:
    write_text(path, json.dumps(to_json(results), indent=1, allow_nan=False) + "\n")


def _failure_text(r: Result) -> str:
    lines = []
    for c in r.checks:
        if not c.ok:
            lines.append(f"fail {c.tensor} rank {c.rank}: element [{c.first_bad}] of {c.numel}: "
                         f"truth {c.truth[c.first_bad]:.6g}, observed {c.observed[c.first_bad]:.6g}; "
                         + "; ".join(c.patterns))
    return "\n".join(lines)


def _api(results: Sequence[Result]) -> str:
    """The check that made the results, as the reports name it."""
    return "collgrad_jax.check" if results and results[0].framework == "jax" else "collgrad_torch.check"


def to_junit(results: Sequence[Result]) -> str:
    fails = sum(r.status == "fail" for r in results)
    errors = sum(r.status == "error" for r in results)
    unsure = sum(r.status == "inconclusive" for r in results)   # JUnit's skipped: neither pass nor fail
    total = sum(r.seconds for r in results)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    backend = results[0].backend if results else "gloo"
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="collgrad-check" tests="{len(results)}" failures="{fails}" errors="{errors}" '
           f'time="{total:.3f}">',
           f'  <testsuite name={quoteattr(_api(results))} tests="{len(results)}" failures="{fails}" errors="{errors}" '
           f'skipped="{unsure}" time="{total:.3f}" timestamp="{stamp}" hostname={quoteattr(socket.gethostname())}>',
           "    <properties>",
           f'      <property name="backend" value={quoteattr(backend)}/>',
           f'      <property name={quoteattr("torch" if not results or results[0].framework == "pytorch" else results[0].framework)} '
           f'value={quoteattr(results[0].version if results else "")}/>',
           f'      <property name="version" value="{VERSION}"/>',
           "    </properties>"]
    for r in results:
        head = (f'    <testcase classname={quoteattr(f"{_api(results)}.{r.backend}.W{r.world}")} '
                f'name={quoteattr(r.name)} time="{r.seconds:.3f}"')
        if r.status == "pass":
            out.append(head + "/>")
            continue
        out.append(head + ">")
        if r.status == "inconclusive":
            unsure_checks = [c for c in r.checks if c.inconclusive]
            out.append(f'      <skipped message={quoteattr(f"inconclusive: {len(unsure_checks)} checks the finite differences cannot resolve; first: {unsure_checks[0].tensor} on rank {unsure_checks[0].rank}" if unsure_checks else "inconclusive")}>'
                       f"{escape(r.table())}</skipped>")
        elif r.status == "error":
            first = (r.error or "").splitlines()[0] if r.error else ""
            out.append(f'      <error type="error class {r.error_class}" message={quoteattr(first)}>'
                       f"{escape(r.error or '')}</error>")
        else:
            bad = sum(not c.ok for c in r.checks)
            first = _failure_text(r).splitlines()[0]
            out.append(f'      <failure type="gradient mismatch" message={quoteattr(f"{bad} failing checks; first: {first}")}>'
                       f"{escape(r.table())}</failure>")
        out.append("    </testcase>")
    out += ["  </testsuite>", "</testsuites>", ""]
    return "\n".join(out)


def write_junit(path: str, results: Sequence[Result]) -> None:
    write_text(path, to_junit(results))
