"""From what the ranks recorded to the verdicts: the finite-difference truths,
the comparison, the patterns. Pure computation over the ranks' result
dictionaries (worker.py), so it is tested without starting a world."""

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from collgrad_core import fd_error, patterns
from . import fd
from collgrad_core.result import Result, TensorCheck
from .messages import RankResult


class Refused(Exception):
    """The ranks' numbers cannot be judged (a forward that does not repeat,
    replicated semantics asked for where it is undefined): error class 2."""


def repeatable(results: Sequence[RankResult]) -> None:
    """Each rank's loss at the same point, three times (the analytic pass and
    two plain forwards), must agree: else finite differences measure noise.
    A loss that is not finite there (nan, inf) is refused first: it has no
    derivative to measure, and nan never equals itself."""
    for res in results:
        b = res["base"]
        if not all(math.isfinite(x) for x in b):
            raise Refused(f"rank {res['rank']}'s loss at the inputs is not finite: "
                          f"{', '.join(repr(x) for x in b)} in three evaluations, so finite differences "
                          "have nothing to measure (inputs outside the function's domain: a log or "
                          "sqrt of a negative, a division by zero, an overflow?)")
    worst: Tuple[float, int, List[float]] = (0.0, -1, [])
    for res in results:
        b = res["base"]
        d = max(abs(x - b[0]) for x in b)
        if d > 1e-12 * max(1.0, abs(b[0])):
            if d > worst[0]:
                worst = (d, res["rank"], b)
    if worst[1] >= 0:
        d, rank, b = worst
        raise Refused(f"non-deterministic forward: rank {rank}'s loss at the same inputs was "
                      f"{', '.join(repr(x) for x in b)} in three evaluations (largest difference {d:.3g}): "
                      "randomness the check cannot replay, or state kept between calls. Every evaluation "
                      "starts from the random state make_inputs left (torch's CPU and CUDA generators, "
                      "Python's random, NumPy's global RandomState), so what moves is drawn elsewhere: a "
                      "torch.Generator of the code's own, a clock, a nondeterministic kernel, a counter or "
                      "cache the function keeps")


def finite_differences(rows: Dict[int, List[List[float]]], tensors: Sequence[fd.Logical], mode: str) -> None:
    """Every derivative finite differences measured must be finite: one that
    is not (a loss that is nan or inf a step away) is no truth to judge by."""
    for t in tensors:
        for e, row in enumerate(rows[t.index]):
            for k, v in enumerate(row):
                if math.isfinite(v):
                    continue
                where = f"{t.name}[{e}]" if mode == "element" else f"{t.name}'s random direction"
                whose = f"replicated over ranks {t.holders}" if t.owner < 0 else f"rank {t.owner}'s"
                raise Refused(f"finite differences are not finite along {where} ({whose}): the derivative of "
                              f"rank {k}'s loss there measured {v!r} (the loss is nan or inf a step of "
                              f"{fd.STEP:g} away): the inputs are at the edge of the function's domain (a sqrt "
                              "or log at 0, a division by zero?); check it at inputs inside")


def replicated_semantics(results: Sequence[RankResult], rows: Dict[int, List[List[float]]],
                         tensors: Sequence[fd.Logical], close: patterns.Close) -> Tuple[bool, str]:
    """Replicated semantics (d L_0/d x) is defined only when every rank's loss
    is the same function: equal values at the point and equal derivatives."""
    l0 = results[0]["base"][0]
    for res in results[1:]:
        lk = res["base"][0]
        if not close([lk], [l0]):
            return False, f"the ranks' losses differ (L_0 = {l0:.6g}, L_{res['rank']} = {lk:.6g})"
    for t in tensors:
        for e, row in enumerate(rows[t.index]):
            for k in range(1, len(row)):
                if not close([row[k]], [row[0]]):
                    return False, (f"d L_{k}/d {t.name}[{e}] = {row[k]:.6g} differs from d L_0/d {t.name}[{e}] "
                                   f"= {row[0]:.6g}: the losses are different functions")
    return True, ""


def judge(results: Sequence[RankResult], r: Result) -> None:
    """Fill r's checks from the ranks' results (in rank order)."""
    world = len(results)
    close = patterns.close_within(r.atol, r.rtol)
    repeatable(results)
    tensors = fd.logicals([res["meta"] for res in results])
    _replicas_alike(results, tensors, r)
    mode = results[0]["mode"]
    r.fd = mode
    rows, measured = fd.derivatives([res["rounds"] for res in results], tensors, mode)
    finite_differences(rows, tensors, mode)
    defined, reason = replicated_semantics(results, rows, tensors, close)
    r.replicated_defined, r.replicated_reason = defined, reason
    copies = _loss_copies(results)
    if copies == world > 1 and r.semantics == "auto":
        if not defined:
            raise Refused(f"the loss is a Replicate DTensor on every rank, one logical loss, but its copies "
                          f"differ: {reason} (DTensor's contract broken upstream: a to_local() whose result "
                          "differs between ranks, made Replicate by from_local without a redistribute)")
        r.semantics = "replicated"
        r.notes.append("the loss is a Replicate DTensor over the whole world: one logical loss, judged under "
                       "replicated semantics (d L / d x)")
    contract = next((str(res.get("contract")) for res in results if res.get("contract")), "")
    if copies == 1 < world and r.semantics == "auto" and defined and contract:
        r.semantics = "replicated"
        r.notes.append(f"every rank's loss is the same function of the inputs, and the model is {contract}: by "
                       "that contract one logical loss that every rank computes, judged under replicated "
                       "semantics (d L / d x); semantics='per_rank' judges it as W losses")
    if r.semantics == "replicated" and not defined:
        raise Refused(f"replicated semantics is undefined here: {reason} (random draws, dropout's masks among "
                      "them, come from the state make_inputs leaves each rank's generators in: seed them alike "
                      f"there for one draw on every rank){_undeclared_copies(results, tensors)}")
    groups = sorted({g for res in results for g in res.get("groups", [])})
    for t in tensors:
        mine = [_check(results[rank], rank, t, rows[t.index], measured[t.index], r, close, defined, groups, world)
                for rank in t.holders]
        if len(mine) > 1 and any(not c.ok for c in mine):
            _copies(t, mine, close, r)
        r.checks.extend(mine)
    patterns.pool_factors(r.checks, close)
    position = [{m["name"]: i for i, m in enumerate(res["meta"])} for res in results]
    r.checks.sort(key=lambda c: (c.rank, position[c.rank].get(c.tensor, 0)))  # each rank's inputs in its order
    for res in results:
        r.notes.extend(f"rank {res['rank']}: {n}" for n in res.get("notes", []))
        r.notes.extend(f"rank {res['rank']}: input {d}" for d in res.get("data", []))


def _check(res: RankResult, rank: int, t: fd.Logical, rows: List[List[float]], measured: List[fd.Measured],
           r: Result, close: patterns.Close, defined: bool, groups: List[int], world: int) -> TensorCheck:
    # the global loss counts each logical loss once: ranks holding copies of one (a DTensor loss
    # Replicate over tp) add it `copies` times, and a mean is over the distinct losses
    copies = len(res.get("loss_copies") or [0])
    per_rank = [sum(row) / copies for row in rows]
    if r.reduction == "mean":
        per_rank = [v * copies / world for v in per_rank]
    per_rank_err = [m.sum_error / copies * (copies / world if r.reduction == "mean" else 1) for m in measured]
    rep = [row[0] for row in rows] if defined else None
    own = [row[rank] for row in rows]
    replicated = r.semantics == "replicated" and rep is not None
    truth = rep if replicated and rep is not None else per_rank
    bound = [m.errors[0] for m in measured] if replicated else per_rank_err
    got: Optional[Any] = res["grads"].get(t.name) if r.fd == "element" else res["dirs"].get(t.name)
    note = ""
    if got is None:
        note = "no gradient reached it (.grad is None): compared as zeros"
        observed = [0.0] * len(truth)
    else:
        observed = [float(v) for v in (got if isinstance(got, list) else [got])]
    if r.fd == "fast":
        note = (note + "; " if note else "") + f"directional derivative along a random unit vector (seed {r.seed})"
    abs_err = [abs(o - x) for o, x in zip(observed, truth)]
    # wrong only beyond the tolerance plus the finite differences' own bound; between the two, unknown
    bad, unsure = fd_error.verdicts(observed, truth, bound, r.atol, r.rtol)
    rel = [e / abs(x) if x != 0 else (0.0 if e == 0 else math.inf) for e, x in zip(abs_err, truth)]
    c = TensorCheck(rank=rank, tensor=t.name, replicated=t.owner < 0, numel=len(truth), observed=observed,
                    truth=truth, max_abs_err=max(abs_err, default=0.0), max_rel_err=max(rel, default=0.0),
                    ok=not bad, first_bad=bad[0] if bad else -1, note=note,
                    replicated_truth=rep, own_truth=own, inconclusive=bool(unsure) and not bad,
                    fd_bound=max(bound, default=0.0), fd_step=max((m.step for m in measured), default=0.0))
    if c.inconclusive:
        i = max(unsure, key=lambda j: bound[j])
        c.note = (c.note + "; " if c.note else "") + fd_error.inconclusive_note(
            i, abs_err[i], r.atol + r.rtol * abs(truth[i]), bound[i], measured[i].step)
    dims = _placed(res, t, world, c)
    if bad:
        c.patterns = patterns.name(observed, truth, close, world, groups,
                                   replicated=rep if r.semantics != "replicated" else None, own=own, dims=dims,
                                   accumulation=int(res.get("backward_calls", 0)) if r.kind == "step" else 0)
    return c


def _placed(res: RankResult, t: fd.Logical, world: int, c: TensorCheck) -> List[Tuple[str, int, bool]]:
    """What the rank said of t's placements, into c (what its copies span, the
    parameter's and its gradient's placements); returns t's mesh dimensions
    as (name, size, whether t's copies span it) for the patterns."""
    found = next((m for m in res["meta"] if m["name"] == t.name), None)
    m: Dict[str, Any] = dict(found) if found else {}
    mesh = [(str(n), int(size)) for n, size in m.get("mesh", [])]
    copied = len(t.holders) > 1
    spans = {n for n, _ in mesh} if len(t.holders) == world else set(str(m.get("over", "")).split(", "))
    if copied:
        c.over = m.get("over") or ("" if len(t.holders) == world else f"ranks {', '.join(map(str, t.holders))}")
    if m.get("placements"):
        shape = ", ".join(str(size) if n.startswith("dim ") else f"{n}={size}" for n, size in mesh)
        grad = res.get("grad_placements", {}).get(t.name)
        c.placements = f"({m['placements']}) on mesh ({shape})" + (f"; .grad ({grad})" if grad else "")
    return [(n, size, copied and n in spans) for n, size in mesh]


def _loss_copies(results: Sequence[RankResult]) -> int:
    """How many ranks hold each copy of the logical loss (1: every rank's
    loss is its own), from a DTensor loss's placements; every rank must say
    the same."""
    sizes = {len(res.get("loss_copies") or [0]) for res in results}
    if len(sizes) > 1:
        raise Refused("the ranks' losses are not alike: some return a DTensor Replicate over "
                      f"{', '.join(str(len(res.get('loss_copies') or [0])) for res in results)} ranks "
                      "(per rank in order); return the same kind of loss on every rank")
    return sizes.pop()


def _copies(t: fd.Logical, mine: List[TensorCheck], close: patterns.Close, r: Result) -> None:
    """The copies of one replicated tensor, where some copy's gradient is
    wrong: what they show together (patterns.copies) goes on each wrong copy,
    a divergence into the notes too."""
    found = patterns.copies([(c.rank, c.observed) for c in mine], mine[0].truth, close)
    if found and found[0].startswith(patterns.DIVERGED):
        r.notes.append(f"{t.name}: {found[0]}")
    if found:
        for c in mine:
            if not c.ok:
                c.patterns = found + [p for p in c.patterns if not p.startswith("no known")]


def _undeclared_copies(results: Sequence[RankResult], tensors: Sequence[fd.Logical]) -> str:
    """The tensors checked as each rank's own whose every rank holds an equal
    copy (a replicated bias beside a sharded weight, Megatron's
    RowParallelLinear's): said as the declaration that would make each one
    tensor, or "" when there are none."""
    owned: Dict[str, List[fd.Logical]] = {}
    for t in tensors:
        if t.owner >= 0:
            owned.setdefault(t.name, []).append(t)
    alike = []
    for name, ts in owned.items():
        values = [results[t.owner]["values"].get(name) for t in ts]
        if len(ts) == len(results) > 1 and values[0] is not None and all(v == values[0] for v in values[1:]):
            alike.append(name)
    if not alike:
        return ""
    quoted = ", ".join(repr(n) for n in alike[:8])
    flags = " ".join(f"--replicated {n}" for n in alike[:8])
    return (f"; every rank holds an equal copy of {', '.join(alike[:8])}, checked as each rank's own: where each "
            f"is one tensor all ranks hold, declare it: replicated=[{quoted}] ({flags})")


def _replicas_alike(results: Sequence[RankResult], tensors: Sequence[fd.Logical], r: Result) -> None:
    """A replicated input must hold the same values on every rank."""
    for t in tensors:
        if t.owner >= 0:
            continue
        first = t.holders[0]
        v0 = results[first]["values"].get(t.name, [])
        for k in t.holders[1:]:
            if results[k]["values"].get(t.name, []) != v0:
                raise Refused(f"replicated input '{t.name}' holds different values on rank {first} and rank "
                              f"{k}: make_inputs must give every rank that holds it the same copy "
                              "(seed a generator alike, or broadcast it)")
