"""The finite-difference schedule every rank follows in lockstep, and the
derivatives the parent computes from the losses the ranks recorded.

A logical tensor is one checked input: a per-rank tensor (owner = its rank)
or a replicated one (owner = -1: every rank perturbs its copy together).
Element mode perturbs one element at a time (2 forwards per element, all
ranks together); fast mode perturbs each logical tensor along one random
unit direction (gradcheck's fast mode), so its checks are directional
derivatives. Both modes record every rank's own loss L_k at every point, so
the parent gets d L_k / d x for every k: the per-rank truth (the sum over
k), the replicated one (k = 0), and the own-loss one (k = r) come from the
same forwards.
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

import torch

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


def logicals(metas: Sequence[List[Dict[str, Any]]]) -> List[Logical]:
    """Every checked tensor of the world, per-rank ones rank by rank, then the
    replicated ones; every rank must declare the same replicated tensors."""
    out: List[Logical] = []
    for rank, meta in enumerate(metas):
        for m in meta:
            if not m["replicated"]:
                out.append(Logical(len(out), m["name"], rank, m["numel"], m["shape"]))
    reps = [(m["name"], m["shape"]) for m in metas[0] if m["replicated"]]
    for rank, meta in enumerate(metas):
        mine = [(m["name"], m["shape"]) for m in meta if m["replicated"]]
        if mine != reps:
            raise FdError(f"replicated inputs differ between rank 0 {reps} and rank {rank} {mine}: "
                          "a replicated tensor is one logical tensor with the same name and shape everywhere")
    for name, shape in reps:
        numel = 1
        for s in shape:
            numel *= s
        out.append(Logical(len(out), name, -1, numel, list(shape)))
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
