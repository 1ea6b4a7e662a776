"""The finite-difference schedule every rank follows in lockstep, and the
derivatives the parent computes from the losses the ranks recorded.

A logical tensor is one checked input: a per-rank tensor (owner = its rank)
or a replicated one (owner = -1), held by every rank or by a group of ranks
only (a DTensor Replicate over one dimension of a 2-D mesh, a tensor
replicated over a subgroup): its holders perturb their copies together.
Element mode perturbs one element at a time (4 forwards per element, all
ranks together: x +- h and x +- 2h); fast mode perturbs each logical tensor along one random
unit direction (gradcheck's fast mode), so its checks are directional
derivatives. Both modes record every rank's own loss L_k at every point, so
the parent gets d L_k / d x for every k: the per-rank truth (the sum over
k), the replicated one (k = 0), and the own-loss one (k = r) come from the
same forwards.

Each difference is taken at h and 2h and carries its error bound
(fd_error.py); one whose bound is over its tolerance is taken again at the
next step of STEPS, the ranks deciding together from every rank's losses
which (unresolved()), so a round after the first holds only those.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from collgrad_core.fd_error import OFFSETS, ROUNDING, STEPS, Measured, best, measure, resolved  # noqa: F401 (the check's names)
from .messages import TensorMeta

STEP = 1e-6          # the first central-difference step on float64 inputs (gradcheck's eps)
BASE_POINTS = 2      # unperturbed forwards first: a forward that does not repeat is refused


class FdError(Exception):
    """The ranks' inputs do not make one consistent problem (exit 2)."""


@dataclass
class Logical:
    index: int
    name: str
    owner: int       # the rank that holds it, -1 when replicated
    numel: int
    shape: List[int]
    holders: List[int] = field(default_factory=list)  # the ranks holding a copy: [owner], or every copy's rank


def holders_of(m: TensorMeta, rank: int, world: int) -> List[int]:
    """The ranks that hold a copy of the tensor a rank's meta entry declares
    (a meta without "holders": replicated means every rank)."""
    if m.get("holders"):
        return sorted(int(k) for k in m["holders"])
    return list(range(world)) if m["replicated"] else [rank]


def logicals(metas: Sequence[List[TensorMeta]]) -> List[Logical]:
    """Every checked tensor of the world: per-rank ones rank by rank, then the
    replicated ones in the order their first holder declares them. Every
    holder of a replicated tensor must declare it alike (name, holders, shape)."""
    world = len(metas)
    out: List[Logical] = []
    for rank, meta in enumerate(metas):
        for m in meta:
            if holders_of(m, rank, world) == [rank]:
                out.append(Logical(len(out), m["name"], rank, m["numel"], m["shape"], [rank]))
    declared = [{(m["name"], tuple(holders_of(m, rank, world))): list(m["shape"]) for m in meta
                 if holders_of(m, rank, world) != [rank]} for rank, meta in enumerate(metas)]
    seen = set()
    for rank, meta in enumerate(metas):
        for m in meta:
            held = holders_of(m, rank, world)
            key = (m["name"], tuple(held))
            if held == [rank] or key in seen:
                continue
            seen.add(key)
            if rank not in held or any(k < 0 or k >= world for k in held):
                raise FdError(f"rank {rank} declares '{m['name']}' replicated over ranks {held}, a group "
                              f"it is not in (world {world})")
            for k in held:
                if declared[k].get(key) != list(m["shape"]):
                    theirs = sorted((n, list(h), s) for (n, h), s in declared[k].items())
                    raise FdError(f"replicated inputs differ between rank {rank} {[(m['name'], list(m['shape']))]} "
                                  f"and rank {k} {theirs}: a replicated tensor is one logical tensor with the "
                                  f"same name and shape on every rank that holds it (ranks {held})")
            out.append(Logical(len(out), m["name"], -1, m["numel"], list(m["shape"]), held))
    return out


def choose_mode(fd: str, tensors: Sequence[Logical], budget: int) -> str:
    """The mode of fd ("auto", "element" or "fast": validated once, in the parent, check_options.py)."""
    if fd == "auto":
        return "element" if sum(t.numel for t in tensors) <= budget else "fast"
    return fd


Diff = Tuple[int, int]        # (logical index, element or -1 for the direction): one difference
Item = Tuple[int, int, int]   # (logical index, element or -1, offset in steps: one of OFFSETS)


def diffs(tensors: Sequence[Logical], mode: str) -> List[Diff]:
    """Every difference the check takes: per element, or one direction per tensor."""
    return [(t.index, e) for t in tensors for e in (range(t.numel) if mode == "element" else [-1])]


def schedule(tensors: Sequence[Logical], mode: str, only: Optional[Sequence[Diff]] = None) -> List[Item]:
    """The points of one round: every difference's OFFSETS, or only those given."""
    return [(index, e, off) for index, e in (diffs(tensors, mode) if only is None else only) for off in OFFSETS]


def direction(seed: int, index: int, numel: int) -> torch.Tensor:
    """The fast mode's unit direction for one logical tensor: the same on every
    rank and machine for a seed (torch's CPU generator)."""
    g = torch.Generator().manual_seed(seed * 1000003 + index)
    v = torch.randn(numel, dtype=torch.float64, generator=g)
    return v / v.norm() if numel else v


Round = Dict[str, Any]  # {"step": h, "diffs": [[index, elem], ...] or None for all, "losses": [L at each point]}


def rounds_measured(rounds: Sequence[Sequence[Round]], tensors: Sequence[Logical],
                    mode: str) -> Dict[Diff, List[Measured]]:
    """rounds[k]: rank k's rounds; per difference, its measurement at each step it was taken at."""
    out: Dict[Diff, List[Measured]] = {}
    for i, first in enumerate(rounds[0]):
        taken = diffs(tensors, mode) if first["diffs"] is None else [(int(a), int(b)) for a, b in first["diffs"]]
        n = len(OFFSETS)
        for j, d in enumerate(taken):
            points = [rank_rounds[i]["losses"][j * n:(j + 1) * n] for rank_rounds in rounds]
            roundings = [float(rank_rounds[i].get("rounding", ROUNDING)) for rank_rounds in rounds]
            out.setdefault(d, []).append(measure(points, float(first["step"]), roundings))
    return out


def unresolved(rounds: Sequence[Sequence[Round]], tensors: Sequence[Logical], mode: str,
               atol: float, rtol: float) -> List[Diff]:
    """The differences whose every step so far leaves them unresolved: the next round's."""
    return [d for d, ms in rounds_measured(rounds, tensors, mode).items()
            if not any(resolved(m, atol, rtol) for m in ms)]


def derivatives(rounds: Sequence[Sequence[Round]], tensors: Sequence[Logical],
                mode: str) -> Tuple[Dict[int, List[List[float]]], Dict[int, List[Measured]]]:
    """For each logical tensor, per element (or the one direction), the list
    over ranks k of d L_k / d x at the best step, and the measurement it came from."""
    measured = rounds_measured(rounds, tensors, mode)
    rows: Dict[int, List[List[float]]] = {t.index: [] for t in tensors}
    chosen: Dict[int, List[Measured]] = {t.index: [] for t in tensors}
    for d in diffs(tensors, mode):
        m = best(measured[d])
        rows[d[0]].append(m.rows)
        chosen[d[0]].append(m)
    return rows, chosen
