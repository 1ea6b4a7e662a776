"""How a rank of a check reads its gradients: as the optimizer sees them (a
DTensor gradient redistributed to its parameter's placements, then its local
part), and all of each held tensor's gradient or its derivative along the
tensor's direction (worker.py's passes)."""

from typing import Any, Dict, List, Optional, Tuple

from . import fd, marks, placements


def optimizer_grads(leaves: List[Any], notes: List[str], raw: Optional[Dict[str, str]] = None, *,
                    finalize: bool = True) -> Dict[str, Any]:
    """Each leaf's gradient as the optimizer sees it, by name: a DTensor's
    .grad redistributed to its parameter's placements (a Partial gradient is
    a sum the optimizer's DTensor ops reduce first), then its local part.
    Collective where a redistribution is due: every rank calls it, for the
    same leaves in the same order (every rank holds every DTensor leaf).
    `raw` gets each DTensor gradient's placements as backward left them.
    `finalize`: a Megatron parameter's gradient reduced over the tensor-parallel
    group as finalize_model_grads would (marks.finalized; the check ran the
    backward, so no step of the user's did)."""
    out: Dict[str, Any] = {}
    for leaf in leaves:
        g = leaf.tensor.grad
        if raw is not None and g is not None and placements.is_dtensor(g):
            raw[leaf.name] = placements.placements(g)
        if g is not None and placements.is_dtensor(g):
            if placements.is_dtensor(leaf.tensor):
                # an addend's (Partial) gradient is the logical sum's: Replicate over that dimension
                try:
                    from torch.distributed.tensor import Replicate
                except ImportError:  # torch 2.4 keeps DTensor private
                    from torch.distributed._tensor import Replicate  # type: ignore[no-redef]

                want = tuple(Replicate() if p.is_partial() else p for p in leaf.tensor.placements)
                if tuple(g.placements) != want:
                    notes.append(f"{leaf.name}: a {placements.placements(leaf.tensor)} tensor with a "
                                 f"{placements.placements(g)} gradient, redistributed to "
                                 f"{', '.join(str(p) for p in want)} as the optimizer's DTensor ops do")
                    g = g.redistribute(leaf.tensor.device_mesh, want)
            g = g.to_local()
        if finalize:
            g = marks.finalized(leaf.tensor, g, notes, leaf.name)
        out[leaf.name] = g
    return out


def read_grads(held: List[Any], mode: str, seed: int,
                optimizer_grads: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The gradient of every tensor this rank holds (optimizer_grads): all of
    it (element mode), or its derivative along the tensor's direction (fast
    mode)."""
    import torch

    grads: Dict[str, Any] = {}
    dirs: Dict[str, Any] = {}
    for t, leaf in held:
        g = optimizer_grads[leaf.name]
        gd = None if g is None else g.detach().to(torch.float64).reshape(-1)
        if mode == "element":
            grads[t.name] = None if gd is None else gd.tolist()
        else:
            v = fd.direction(seed, t.index, t.numel)
            dirs[t.name] = None if gd is None else float(gd @ v)
            grads[t.name] = None if gd is None else gd[:256].tolist()
    return grads, dirs
