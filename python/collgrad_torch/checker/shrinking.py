"""Shrinking a failing check to a small reproduction (issue 36 item 5).

A check that fails at W=4 on a layer of 4096 elements prints numbers no one
can read. shrink() reduces it, one change at a time, keeping each change
only while the check still fails with the same pattern (the first failing
check's first pattern, by its short name, patterns.key): the smallest world
first, then each tensor input's dimensions (the leading part is kept: 1,
then 2, 4, ... up to half), then size-1 dimensions dropped, then the values
made small integers, then fewer backward roots. Every candidate is a full
check (finite differences, in a warm world), so a change that makes the
function raise or pass is simply not kept. A time budget bounds the whole
(default 60 s); what it reached is reported either way.

The answer holds the smallest failing check and a standalone reproduction
script: the inputs as literals (every rank's), the function imported by its
reference, and the command that runs it.
"""

import copy
import dataclasses
import json
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union, cast

from collgrad_core import patterns, refs
from . import api, check_options, warm
from collgrad_core.result import Result
from .messages import Spec


class OutOfTime(Exception):
    pass


@dataclass
class Shrunk:
    original: Result
    result: Result                   # the smallest check that still fails with the pattern
    pattern: str                     # the kept pattern's short name (patterns.key)
    steps: List[str] = field(default_factory=list)   # the changes kept, in order
    tried: int = 0                   # candidate checks run
    seconds: float = 0.0
    budget: float = 60.0
    out_of_time: bool = False
    script: str = ""

    def size(self, r: Result) -> str:
        """W and every input's largest shape over the ranks, with elements per rank."""
        parts = []
        for name, shape in _shapes(r).items():
            n = 1
            for d in shape:
                n *= d
            parts.append(f"{name}{list(shape)} ({n} element{'s' if n != 1 else ''})")
        return f"W={r.world}" + (", " + ", ".join(parts) if parts else "")

    def summary(self) -> str:
        why = (f"the {self.budget:g} s budget ran out" if self.out_of_time
               else f"no smaller check fails the same way ({self.seconds:.1f} s of a {self.budget:g} s budget)")
        lines = [f"shrunk: {self.size(self.original)}  ->  {self.size(self.result)}",
                 f"  still fails with: {self.pattern}; {self.tried} candidate checks, {why}"]
        lines += [f"  kept: {s}" for s in self.steps]
        return "\n".join(lines)


def _shapes(r: Result) -> Dict[str, List[int]]:
    """Each tensor input's largest size per dimension over the ranks."""
    out: Dict[str, List[int]] = {}
    for ins in r.rank_inputs:
        for name, d in ins.items():
            if d.get("kind") != "tensor":
                continue
            shape = d["shape"]
            old = out.get(name)
            out[name] = list(shape) if old is None or len(old) != len(shape) else [max(a, b) for a, b in zip(old, shape)]
    return out


def signature(r: Result) -> Optional[str]:
    """The pattern a shrink keeps: the first failing check's first pattern."""
    for c in r.checks:
        if not c.ok and c.patterns:
            return patterns.key(c.patterns[0])
    return None


def _fails_alike(r: Result, key: str) -> bool:
    return r.status == "fail" and any(patterns.key(p) == key for c in r.checks if not c.ok for p in c.patterns)


def _fresh(r: Result, world: int) -> Result:
    return dataclasses.replace(r, world=world, checks=[], notes=[], error=None, error_class=0, fd="",
                               replicated_defined=False, replicated_reason="", rank_inputs=[], seconds=0.0)


class _Search:
    def __init__(self, original: Result, spec: Spec, key: str, budget: float, python: Optional[str]):
        self.best, self.spec, self.key = original, spec, key
        self.deadline = time.monotonic() + budget
        self.python = python
        self.steps: List[str] = []
        self.tried = 0

    def attempt(self, label: str, **changes: Any) -> bool:
        if time.monotonic() > self.deadline:
            raise OutOfTime()
        spec = copy.deepcopy(self.spec)
        for k, v in changes.items():
            if k == "transform":
                spec["transform"] = dict(spec["transform"], **v)
            else:
                cast(Dict[str, Any], spec)[k] = v  # a key of Spec, by name
        self.tried += 1
        r = api.execute(_fresh(self.best, spec["world"]), spec, self.python)
        if not _fails_alike(r, self.key):
            return False
        self.best, self.spec = r, spec
        self.steps.append(label)
        return True

    def world(self) -> None:
        for w in range(1, self.spec["world"]):
            if self.attempt(f"world {self.spec['world']} -> {w}", world=w):
                return

    def dimensions(self) -> None:
        shapes = _shapes(self.best)
        for name, shape in shapes.items():
            for d, n in enumerate(shape):
                for cap in sorted({1, 2, 4, n // 2} - {0}):
                    if cap >= n:
                        break
                    caps = dict(self.spec["transform"].get("caps", {}))
                    current = list(caps.get(name, shape))
                    current[d] = cap
                    caps[name] = current
                    if self.attempt(f"{name}: dimension {d} {n} -> {cap}", transform={"caps": caps}):
                        break

    def squeeze(self) -> None:
        for name, shape in _shapes(self.best).items():
            if 1 in shape and len(shape) > 1:
                squeezed = sorted(set(self.spec["transform"].get("squeeze", [])) | {name})
                self.attempt(f"{name}: size-1 dimensions dropped", transform={"squeeze": squeezed})

    def values(self) -> None:
        if _shapes(self.best):
            self.attempt("values rounded to small integers", transform={"small": True})

    def roots(self) -> None:
        n = self.best.roots
        keep = list(self.spec.get("roots") or range(n))
        for i in list(keep):
            if len(keep) > 1:
                trial = [k for k in keep if k != i]
                if self.attempt(f"backward root {i} dropped", roots=trial):
                    keep = trial


def shrink(fn: Optional[api.Fn] = None, *, budget: float = 60.0, **options: Any) -> Shrunk:
    """Check fn with check()'s keywords (world, inputs, step, ...), and when
    it fails with a gradient pattern, reduce it as this module says within
    `budget` seconds. A check that passes, or could not run, comes back
    unshrunk (tried = 0)."""
    return shrink_options(fn, check_options.of(**options), budget=budget)


def shrink_options(fn: Optional[api.Fn], opts: check_options.CheckOptions, *, budget: float = 60.0) -> Shrunk:
    """shrink() on options made elsewhere (the CLI's, the pytest marker's)."""
    if not (isinstance(budget, (int, float)) and not isinstance(budget, bool) and 0 <= budget < math.inf):
        raise api.CheckError(f"budget must be a finite number of seconds >= 0, got {budget!r}")
    refused = sorted(set(opts.changed()) - {f.name for f in check_options.fields("shrink")})
    if refused:
        raise api.CheckError(f"shrink() checks eager code as written: it does not take {', '.join(refused)}")
    t0 = time.monotonic()
    original, spec = api.plan(fn, opts)
    python = opts.python
    spec["report_inputs"] = True
    pool = warm.active()
    own = warm.warm_worlds() if pool is None else None
    if own is not None:
        own.__enter__()
    try:
        original = api.execute(original, copy.deepcopy(spec), python)
        key = signature(original)
        done = Shrunk(original=original, result=original, pattern=key or "", budget=budget)
        if original.status != "fail" or key is None:
            done.seconds = time.monotonic() - t0
            return done
        search = _Search(original, spec, key, budget, python)
        try:
            for stage in (search.world, search.dimensions, search.squeeze, search.values, search.roots):
                stage()
        except OutOfTime:
            done.out_of_time = True
        done.result, done.steps, done.tried = search.best, search.steps, search.tried
        done.seconds = time.monotonic() - t0
        done.script = script(done, search.spec, opts.validated())
        return done
    finally:
        if own is not None:
            own.__exit__(None, None, None)


def _py(text: str) -> str:
    """JSON's literals as Python's (the values are numbers, lists, strings, booleans)."""
    return text.replace("true", "True").replace("false", "False").replace("NaN", "float('nan')")


# what the reproduction states of its check (the rest is its own: world, inputs, roots; or not the check's)
_NOT_CARRIED = ("world", "inputs", "step", "python", "name", "roots", "setup", "teardown")


def script(s: Shrunk, spec: Spec, opts: check_options.CheckOptions) -> str:
    """A standalone reproduction: python FILE.py runs the shrunk check and
    exits 1 while it still fails."""
    r = s.result
    literal = all(d.get("kind") == "tensor" for ins in r.rank_inputs for d in ins.values())
    lines = ['"""A reproduction written by collgrad_torch.shrink.',
             "",
             f"{r.ref} fails at {s.size(r)} (shrunk from {s.size(s.original)})",
             f"with the pattern {s.pattern}. Run: {sys.executable} THIS_FILE.py (exit 1 while it fails).",
             '"""', "", "import os", "", "import torch", "", "import collgrad_torch as cg", "",
             f"FN = {refs.absolute(r.ref)!r}", f"WORLD = {r.world}"]
    if literal:
        per_rank = [{name: {k: d[k] for k in ("shape", "dtype", "requires_grad", "replicated", "values")}
                     for name, d in ins.items()} for ins in r.rank_inputs]
        rows = [f"    {_py(json.dumps(ins))},  # rank {k}" for k, ins in enumerate(per_rank)]
        lines += ["INPUTS = [  # per rank: name -> shape, dtype, requires_grad, replicated, values"] + rows + ["]",
                  "", "",
                  "def make_inputs(rank: int, world: int) -> dict:",
                  "    out = {}",
                  "    for name, d in INPUTS[rank].items():",
                  "        t = torch.tensor(d[\"values\"], dtype=getattr(torch, d[\"dtype\"])).reshape(d[\"shape\"])",
                  "        t.requires_grad_(d[\"requires_grad\"])",
                  "        group = d[\"replicated\"] if isinstance(d[\"replicated\"], list) else None",
                  "        out[name] = cg.replicated(t, group=group) if d[\"replicated\"] else t",
                  "    return out"]
    else:  # a module among the inputs: the original make_inputs, cut as the shrink cut it
        lines += [f"TRANSFORM = {spec['transform']!r}", "", "",
                  "def make_inputs(rank: int, world: int) -> dict:",
                  "    from collgrad_core import refs",
                  "    from collgrad_torch.checker import inputs",
                  "",
                  f"    return inputs.transform(refs.resolve({spec['inputs']!r})(rank, world), TRANSFORM)"]
    kw: Dict[str, Any] = {k: v for k, v in opts.changed().items() if k not in _NOT_CARRIED}
    if isinstance(kw.get("replicated"), tuple):
        kw["replicated"] = list(kw["replicated"])
    for hook in ("setup", "teardown"):  # by reference, as the check passed them to its ranks
        if spec.get(hook):
            kw[hook] = spec[hook]  # type: ignore[literal-required]
    if spec.get("roots") is not None:
        kw["roots"] = spec["roots"]
    extra = "".join(f", {k}={v!r}" for k, v in kw.items())
    target = "step=FN" if r.kind == "step" else "FN"
    lines += ["", "",
              'if __name__ == "__main__":',
              f"    result = cg.check({target}, world=WORLD, inputs=os.path.abspath(__file__) + \":make_inputs\"{extra})",
              "    print(result.table())",
              "    raise SystemExit(0 if result.ok else 1)", ""]
    return "\n".join(lines)


__all__ = ["Shrunk", "shrink", "signature", "script"]

