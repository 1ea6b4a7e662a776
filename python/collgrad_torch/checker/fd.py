"""The finite-difference schedule every rank follows in lockstep, and the
derivatives the parent computes from the losses the ranks recorded.

A logical tensor is one checked input: a per-rank tensor (owner = its rank)
or a replicated one (owner = -1), held by every rank or by a group of ranks
only (a DTensor Replicate over one dimension of a 2-D mesh, a tensor
replicated over a subgroup): its holders perturb their copies together.
Element mode perturbs one element at a time (2 forwards per element, all
ranks together); fast mode perturbs each logical tensor along one random
unit direction (gradcheck's fast mode), so its checks are directional
derivatives. Both modes record every rank's own loss L_k at every point, so
the parent gets d L_k / d x for every k: the per-rank truth (the sum over
k), the replicated one (k = 0), and the own-loss one (k = r) come from the
same forwards.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Sequence, Tuple

import torch

from .messages import TensorMeta

STEP = 1e-6          # central-difference step on float64 inputs (gradcheck's eps)
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
    total = sum(t.numel for t in tensors)
    if fd == "auto":
        return "element" if total <= budget else "fast"
    if fd not in ("element", "fast"):
        raise FdError(f"fd must be 'auto', 'element' or 'fast', got '{fd}'")
    return fd


Item = Tuple[int, int, int]  # (logical index, element or -1 for the direction, +1 / -1)


def schedule(tensors: Sequence[Logical], mode: str) -> List[Item]:
    items: List[Item] = []
    for t in tensors:
        for e in (range(t.numel) if mode == "element" else [-1]):
            items.append((t.index, e, 1))
            items.append((t.index, e, -1))
    return items


def direction(seed: int, index: int, numel: int) -> torch.Tensor:
    """The fast mode's unit direction for one logical tensor: the same on every
    rank and machine for a seed (torch's CPU generator)."""
    g = torch.Generator().manual_seed(seed * 1000003 + index)
    v = torch.randn(numel, dtype=torch.float64, generator=g)
    return v / v.norm() if numel else v


def derivatives(losses: Sequence[Sequence[float]], items: Sequence[Item], tensors: Sequence[Logical],
                step: float = STEP) -> Dict[int, List[List[float]]]:
    """For each logical tensor, per element (or the one direction), the list
    over ranks k of d L_k / d x. losses[k][j] is rank k's loss at item j."""
    out: Dict[int, List[List[float]]] = {t.index: [] for t in tensors}
    world = len(losses)
    for j in range(0, len(items), 2):
        index = items[j][0]
        out[index].append([(losses[k][j] - losses[k][j + 1]) / (2 * step) for k in range(world)])
    return out
