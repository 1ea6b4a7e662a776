"""What a check found: one TensorCheck per rank and checked tensor, and the
Result that holds them (the Python API's answer, the source of the JSON and
JUnit reports and of the terminal table)."""

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class TensorCheck:
    """One tensor's gradient on one rank against the finite-difference truth.
    In fast mode each list holds one directional derivative."""
    rank: int
    tensor: str
    replicated: bool
    numel: int                       # elements compared
    observed: List[float]            # the rank's .grad (zeros where none reached it)
    truth: List[float]               # the truth the verdict uses
    max_abs_err: float
    max_rel_err: float
    ok: bool
    first_bad: int = -1
    patterns: List[str] = field(default_factory=list)
    note: str = ""
    replicated_truth: Optional[List[float]] = None   # d L_0 / d x, when defined
    own_truth: Optional[List[float]] = None          # d L_rank / d x
    over: str = ""                   # a replica's span when not every rank: mesh dimensions ("tp") or ranks
    placements: str = ""             # a DTensor's: "(Shard(0), Replicate()) on (dp=2, tp=2); .grad (...)"
    # ok and inconclusive: off by more than the tolerance, but not beyond it plus the finite
    # differences' own error bound (fd_bound, the largest over the elements, at steps up to fd_step)
    inconclusive: bool = False
    fd_bound: float = 0.0
    fd_step: float = 0.0

    @property
    def status(self) -> str:
        return "fail" if not self.ok else ("inconclusive" if self.inconclusive else "pass")


@dataclass
class Result:
    name: str                        # the case's name: the reference unless the caller named it
    world: int
    backend: str
    kind: str                        # "fn" or "step"
    semantics: str                   # "auto", "per_rank" or "replicated"
    reduction: str                   # "sum" or "mean"
    fd: str = ""                     # "element" or "fast" (the mode used)
    seed: int = 0
    atol: float = 1e-5
    rtol: float = 1e-3
    torch_version: str = ""
    framework: str = "pytorch"       # "pytorch" or "jax" (collgrad_jax's check)
    framework_version: str = ""      # the JAX check's jax.__version__ (torch's is torch_version)
    isolation: str = ""
    seconds: float = 0.0
    checks: List[TensorCheck] = field(default_factory=list)
    replicated_defined: bool = False
    replicated_reason: str = ""
    notes: List[str] = field(default_factory=list)
    error: Optional[str] = None      # the check could not complete
    error_class: int = 0             # ExitClass.USAGE the function or its inputs, .INFRA infrastructure
    ref: str = ""                    # the function's reference (FILE.py:NAME or MODULE:NAME)
    # each rank's inputs as make_inputs gave them (shrink.py asks for them): name -> description
    rank_inputs: List[Dict[str, Any]] = field(default_factory=list)
    roots: int = 1                   # how many roots fn returned (before any roots= cut)
    mode: str = ""                   # "eager", "aot_eager", "inductor"...: when check(modes=...) was asked
    modes: List["Result"] = field(default_factory=list)  # the other modes' results, against the same truth

    @property
    def version(self) -> str:
        """The framework's version: torch's or jax's."""
        return self.framework_version or self.torch_version

    @property
    def ok(self) -> bool:
        return self.error is None and all(c.ok for c in self.checks) and all(m.ok for m in self.modes)

    def all(self) -> List["Result"]:
        """This result and every other mode's (each one case in the reports)."""
        return [dataclasses.replace(self, modes=[])] + self.modes

    def disagreeing(self) -> List[str]:
        """The modes whose gradients are wrong or that could not run."""
        return [m.mode for m in self.all() if m.status in ("fail", "error")]

    @property
    def status(self) -> str:
        """pass, fail, inconclusive (no gradient wrong, but some the finite
        differences cannot resolve) or error; with modes, the worst of them."""
        own = "error" if self.error is not None else next(
            (s for s in ("fail", "inconclusive") if any(c.status == s for c in self.checks)), "pass")
        statuses = [own] + [m.status for m in self.modes]
        return next((s for s in ("error", "fail", "inconclusive") if s in statuses), "pass")

    def table(self) -> str:
        """The terminal table: a line per rank and tensor, the pattern under each wrong one;
        with modes, one table per mode and a line naming the modes that disagree."""
        if not self.modes:
            return self._table()
        tables = [m._table() for m in self.all()]  # each mode's own table
        verdicts = ", ".join(f"{m.mode} {m.status}" for m in self.all())
        bad = self.disagreeing()
        tables.append(f"modes against one eager finite-difference truth: {verdicts}"
                      + (f"; disagreeing: {', '.join(bad)}" if bad else "; all agree"))
        return "\n".join(tables)

    def _table(self) -> str:
        head = (f"{self.name} at W={self.world} ({self.backend}, {_SHORT.get(self.framework, self.framework)} "
                f"{self.version or '?'}), "
                f"{self.kind}, {self.semantics} semantics, reduction {self.reduction}, "
                f"fd {self.fd or '-'} (seed {self.seed}): {self.status.upper()}")
        lines = [head]
        if self.error is not None:
            lines.append(self.error)
            return "\n".join(lines)
        width = max([24] + [len(_label(c)) for c in self.checks])
        who = "rank" if self.framework == "pytorch" else "device"
        lines.append(f"  {who:>4}  {'tensor':<{width}} {'n':>6}  {'max abs err':>11}  {'max rel err':>11}  "
                     f"{'verdict':<7}  observed / truth")
        for c in self.checks:
            shown = min(3, len(c.observed))
            pair = ", ".join(f"{_fmt(o)}/{_fmt(t)}" for o, t in zip(c.observed[:shown], c.truth[:shown]))
            more = ", ..." if c.numel > shown else ""
            name = _label(c)
            lines.append(f"  {c.rank:>4}  {name:<{width}} {c.numel:>6}  {_fmt(c.max_abs_err):>11}  "
                         f"{_fmt(c.max_rel_err):>11}  {_VERDICT[c.status]:<7}  {pair}{more}")
            if c.note:
                lines.append(f"        note: {c.note}")
            if c.placements and not c.ok:
                lines.append(f"        placements: {c.placements}")
            for p in ([] if c.ok else c.patterns):
                lines.append(f"        pattern: {p}")
        if self.framework == "pytorch":  # the JAX check has one global loss: its notes say how it is made
            lines.append(f"  replicated semantics: {'defined' if self.replicated_defined else 'undefined'}"
                         f"{': ' + self.replicated_reason if self.replicated_reason else ''}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)


_SHORT = {"pytorch": "torch"}
_VERDICT = {"pass": "ok", "fail": "WRONG", "inconclusive": "unsure"}


def _label(c: TensorCheck) -> str:
    """The table's tensor column: its name, and what its copies span."""
    if not c.replicated:
        return c.tensor
    return c.tensor + (f" (replicated over {c.over})" if c.over else " (replicated)")


def _fmt(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        return str(v)
    return f"{v:.6g}"
