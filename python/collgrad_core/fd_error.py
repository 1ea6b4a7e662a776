"""A finite difference and its own error, with no torch (the JAX check uses
it too): design.md section 18's "a truth that knows its own error".

A central difference D(h) = (L(x + h) - L(x - h)) / 2h is off from the
derivative by truncation (c h^2, c from the loss's third derivative) and by
the rounding of the two losses (about eps |L| / h). Taking it at h and at 2h
measures the first (D(h) - D(2h) = -3 c h^2) and samples the second; the
bound is |D(h) - D(2h)| plus ROUNDING |L| / h. A gradient is wrong only
beyond the tolerance plus that bound (verdicts); a difference whose bound is
over its tolerance is taken again at the next step of STEPS, where rounding
weighs less, and the step with the smallest bound gives the truth.
"""

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

STEPS = (1e-6, 1e-5, 1e-4, 1e-3)  # the ladder a difference climbs while its error bound is over its tolerance
OFFSETS = (1, -1, 2, -2)          # each difference's points, in steps: x + h, x - h, x + 2h, x - 2h
# Rounding in one evaluation of a loss, relative to |L|: a few units of float64's roundoff, as a
# long sum accumulates them (torch and XLA sum pairwise, so the error grows like log n, not n)
ROUNDING = 8 * 2.0 ** -53
RESOLVED = 0.5       # a difference is resolved when its error bound is at most this share of its tolerance


@dataclass
class Measured:
    """One difference at one step: per rank k, d L_k / d x and its error bound,
    and the bound of their sum (the per-rank truth's)."""
    step: float
    rows: List[float]
    errors: List[float]
    sum_error: float


def rounding_of(unit_roundoff: float) -> float:
    """ROUNDING for a loss computed with this unit roundoff (a float32 one's, where the forward could not
    be run in float64 throughout)."""
    return max(ROUNDING, 16 * unit_roundoff)


def measure(points: Sequence[Sequence[float]], step: float,
            roundings: Optional[Sequence[float]] = None) -> Measured:
    """points[k]: rank k's losses at x + h, x - h, x + 2h, x - 2h. The central
    difference at h is the value; its error bound is the truncation the
    difference at 2h shows (|D(h) - D(2h)| is three times D(h)'s h^2 term, and
    a sample of the rounding noise too) plus the rounding of the two losses it
    divides by 2h (roundings[k]: rank k's relative rounding, ROUNDING where
    not given)."""
    rel = list(roundings) if roundings is not None else [ROUNDING] * len(points)
    d1 = [(p[0] - p[1]) / (2 * step) for p in points]
    d2 = [(p[2] - p[3]) / (4 * step) for p in points]
    rounding = [u * (abs(p[0]) + abs(p[1])) / (2 * step) for p, u in zip(points, rel)]
    errors = [abs(a - b) + r for a, b, r in zip(d1, d2, rounding)]
    return Measured(step, d1, errors, abs(sum(d1) - sum(d2)) + sum(rounding))


def best(ms: Sequence[Measured]) -> Measured:
    """Of one difference's steps, the one whose per-rank truth has the smallest bound."""
    return min(ms, key=lambda m: (m.sum_error if math.isfinite(m.sum_error) else math.inf, m.step))


def resolved(m: Measured, atol: float, rtol: float) -> bool:
    """Whether the difference can tell a right gradient from a wrong one: the
    bound of the sum over ranks (the per-rank truth) and of rank 0's alone
    (the replicated one) within RESOLVED of their tolerances. atol is shared
    out over the ranks (a mean divides the truth by W)."""
    share = atol / max(1, len(m.rows))
    total = sum(m.rows)
    if not math.isfinite(m.sum_error) or m.sum_error > RESOLVED * (share + rtol * abs(total)):
        return False
    return m.errors[0] <= RESOLVED * (share + rtol * abs(m.rows[0]))


def verdicts(observed: Sequence[float], truth: Sequence[float], bound: Sequence[float], atol: float,
             rtol: float) -> Tuple[List[int], List[int]]:
    """(wrong, inconclusive) element indices: off by more than atol + rtol |truth|
    is inconclusive until it is off by more than that plus the bound too."""
    wrong: List[int] = []
    unsure: List[int] = []
    for i, (o, t, e) in enumerate(zip(observed, truth, bound)):
        d, tol = abs(o - t), atol + rtol * abs(t)
        if d <= tol:
            continue
        (unsure if d <= tol + e else wrong).append(i)   # nan: wrong (nan <= x is False)
    return wrong, unsure


def inconclusive_note(at: int, off: float, tol: float, bound: float, step: float) -> str:
    return (f"inconclusive: the finite differences cannot resolve this gradient: element {at} is off by "
            f"{off:.3g}, over the tolerance {tol:.3g} but within it plus the finite differences' error "
            f"bound {bound:.3g} at step {step:g}")
