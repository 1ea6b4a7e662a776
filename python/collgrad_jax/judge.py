"""From what the device process measured to the verdicts: each device's
block of each input's gradient against the finite-difference truth of the
same elements, with the PyTorch check's patterns. Pure computation over a
Measured, so it is tested without JAX.

The global loss is L = sum_k L_k (reduction "mean": its mean), where the
L_k are f's per-device losses, or the one scalar f returns (k = 0 only).
Device d's truth for its block is d L / d x there; with per-device losses,
d L_d / d x is what "only the device's own loss reaches it" would give, and
d L_0 / d x what a device would get if every device's loss were device 0's.
"""

import math
from typing import Dict, List, Optional, Sequence, Tuple

from collgrad_core import fd_error, patterns
from collgrad_core.result import Result, TensorCheck

from .devices import Block, Input, Measured


class Refused(Exception):
    """The numbers cannot be judged (a forward that does not repeat, a loss
    or a derivative that is not finite): exit 2."""


def repeatable(base: Sequence[Sequence[float]]) -> None:
    """The loss at the inputs, three times (in the gradient's pass, in the
    finite differences' trace, in a trace of its own), must be finite and the
    same: else finite differences measure noise."""
    flat = [x for b in base for x in b]
    if not all(math.isfinite(x) for x in flat):
        raise Refused(f"the loss at the inputs is not finite ({', '.join(repr(x) for x in flat[:6])}): finite "
                      "differences have nothing to measure (inputs outside the function's domain?)")
    for b in base[1:]:
        if any(abs(x - y) > 1e-12 * max(1.0, abs(y)) for x, y in zip(b, base[0])):
            raise Refused(f"non-deterministic forward: the loss at the same inputs was {base[0]} then {b} "
                          "(something varies between calls or traces: randomness drawn while tracing, "
                          "state kept between calls, a clock)")


def judge(m: Measured, r: Result) -> None:
    """Fill r's checks and notes from m."""
    repeatable(m["base"])
    r.framework_version, r.fd = m["jax"], m["mode"]
    close = patterns.close_within(r.atol, r.rtol)
    per_device = m["losses"] == r.world > 1
    r.notes.append("the loss: f's one global scalar" if not per_device else
                   f"the loss: the {'mean' if r.reduction == 'mean' else 'sum'} of f's {r.world} per-device losses")
    axes = [(str(n), int(k)) for n, k in m.get("mesh") or [["i", r.world]]]
    for inp in m["inputs"]:
        copies: Dict[str, List[TensorCheck]] = {}
        for b in inp["blocks"]:
            held = [x for x in inp["blocks"] if x["index"] == b["index"]]
            c = _check(b, inp, r, close, per_device, axes, _spans(held, axes))
            copies.setdefault(b["index"], []).append(c)
            r.checks.append(c)
        for mine in copies.values():
            if len(mine) > 1 and any(not c.ok for c in mine):
                found = patterns.copies([(c.rank, c.observed) for c in mine], mine[0].truth, close, "jax")
                if found and found[0].startswith(patterns.DIVERGED):
                    r.notes.append(f"{mine[0].tensor}: {found[0]}")
                for c in mine:
                    if not c.ok and found:
                        c.patterns = found + [p for p in c.patterns if not p.startswith("no known")]
    patterns.pool_factors(r.checks, close)
    order = {inp["name"]: i for i, inp in enumerate(m["inputs"])}
    r.checks.sort(key=lambda c: (c.rank, order.get(c.tensor.split("[")[0], 0)))
    r.notes.extend(m.get("notes", []))
    r.notes.extend(vma_notes(m, r, close))


def _truths(rows: List[List[float]], reduction: str) -> List[float]:
    return [sum(row) / (len(row) if reduction == "mean" else 1) for row in rows]


def _spans(held: List[Block], axes: List[Tuple[str, int]]) -> List[str]:
    """The mesh axes a block's copies spread over: those on which their devices differ."""
    coords = [x.get("coords") or [x["device"]] for x in held]
    return [name for a, (name, _) in enumerate(axes) if len({c[a] for c in coords if a < len(c)}) > 1]


def _check(b: Block, inp: Input, r: Result, close: patterns.Close, per_device: bool,
           axes: List[Tuple[str, int]], over: List[str]) -> TensorCheck:
    truth = _truths(b["rows"], r.reduction)
    scale = 1.0 / r.world if r.reduction == "mean" and per_device else 1.0
    own = [row[b["device"]] * scale for row in b["rows"]] if per_device else None
    rep = [row[0] * scale * r.world for row in b["rows"]] if per_device else None  # every loss device 0's
    observed = b["observed"]
    share = len(b["rows"][0]) if r.reduction == "mean" and b["rows"] else 1   # a mean's bound, as its truth
    bound = [e / share for e in b.get("bounds") or [0.0] * len(truth)]
    abs_err = [abs(o - t) for o, t in zip(observed, truth)]
    # wrong only beyond the tolerance plus the finite differences' own bound; between the two, unknown
    bad, unsure = fd_error.verdicts(observed, truth, bound, r.atol, r.rtol)
    rel = [e / abs(t) if t != 0 else (0.0 if e == 0 else math.inf) for e, t in zip(abs_err, truth)]
    whole = b["index"] == "[" + ", ".join(":" for _ in inp["shape"]) + "]" or not inp["shape"]
    note = f"directional derivative along a random unit vector (seed {r.seed})" if r.fd == "fast" else ""
    c = TensorCheck(rank=b["device"], tensor=inp["name"] if whole else inp["name"] + b["index"],
                    replicated=bool(over), numel=len(truth), observed=list(observed), truth=truth,
                    max_abs_err=max(abs_err, default=0.0), max_rel_err=max(rel, default=0.0), ok=not bad,
                    first_bad=bad[0] if bad else -1, note=note, replicated_truth=rep, own_truth=own,
                    over=", ".join(over), inconclusive=bool(unsure) and not bad, fd_bound=max(bound, default=0.0),
                    fd_step=max(b.get("steps") or [0.0]),
                    placements=f"{inp['spec']} on mesh ({', '.join(f'{n}={k}' for n, k in axes)})")
    if c.inconclusive:
        i = max(unsure, key=lambda j: bound[j])
        c.note = (c.note + "; " if c.note else "") + fd_error.inconclusive_note(
            i, abs_err[i], r.atol + r.rtol * abs(truth[i]), bound[i], (b.get("steps") or [0.0])[i])
    if bad:
        c.patterns = patterns.name(observed, truth, close, r.world, [], replicated=rep, own=own, framework="jax",
                                   dims=[(n, k, n in over) for n, k in axes])
    return c


def vma_notes(m: Measured, r: Result, close: patterns.Close) -> List[str]:
    """What flipping check_vma changed: nothing, a refusal, the forward, or
    the gradients (each differing block named)."""
    f = m.get("flipped")
    if not f:
        return []
    written = sorted(set(m["written"]))
    was = f"check_vma={written[0]}" if len(written) == 1 else "check_vma as each call wrote it"
    to = f"check_vma={f['check_vma']}" if len(written) == 1 else "each call's check_vma negated"
    head = f"check_vma: as written {was}; flipped to {to}"
    if "error" in f:
        return [f"{head}: JAX refuses it ({f['error']}) (jax {m['jax']})"]
    notes: List[str] = []
    total = sum(m["base"][0]) / (len(m["base"][0]) if r.reduction == "mean" else 1)
    flipped_total = f.get("base", total) / (len(m["base"][0]) if r.reduction == "mean" else 1)
    if not close([flipped_total], [total]):
        notes.append(f"{head}: the forward differs (loss {flipped_total:.9g}, as written {total:.9g})")
    differ: List[str] = []
    as_written = {(i["name"], b["device"]): b for i in m["inputs"] for b in i["blocks"]}
    truth = {(c.tensor.split("[")[0], c.rank): c for c in r.checks}
    for inp in f.get("inputs", []):
        for b in inp["blocks"]:
            mine: Optional[Block] = as_written.get((inp["name"], b["device"]))
            if mine is None or patterns.alike(b["observed"], mine["observed"], close):
                continue
            c = truth.get((inp["name"], b["device"]))
            right = c is not None and close(b["observed"], c.truth)
            differ.append(f"{inp['name']} on device {b['device']} ({'right' if right else 'wrong'} flipped, "
                          f"{'right' if c is not None and c.ok else 'wrong'} as written)")
    if differ:
        notes.append(f"{head}: the gradients differ (jax {m['jax']}): {'; '.join(differ)}")
    elif not notes:
        notes.append(f"{head}: the same gradients (jax {m['jax']})")
    return notes
