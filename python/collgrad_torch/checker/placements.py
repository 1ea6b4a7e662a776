"""DTensor's contract for the check's inputs (design.md section 16).

A DTensor input or parameter (torch 2.x, made in make_inputs, which runs
inside the process group, or by parallelize_module / fully_shard) is checked
by DTensor's contract: its placements say what its local
parts are, per mesh dimension. Over a Replicate dimension the copies are
one logical tensor: its holders (the ranks whose mesh coordinates differ
there only) perturb their copies together. Over a Shard or Partial dimension
the local parts are distinct elements or addends: perturbed alone. So a
Replicate DTensor on a 1-D mesh is one tensor held by every rank of the
mesh, and an HSDP parameter (Replicate, Shard) is one shard held by each
replica group. The observed gradient is the one the optimizer's DTensor ops
see: .grad redistributed to the parameter's placements (a Partial gradient
reduced), its local part (worker.py).
"""

from typing import Any, List, Optional, Tuple

import torch


def is_dtensor(t: Any) -> bool:
    """A DTensor (torch 2.x), known by its parts so torch 1.x needs no import."""
    return isinstance(t, torch.Tensor) and hasattr(t, "_local_tensor") and hasattr(t, "placements")


def _root_mesh(mesh: Any) -> Any:
    """The mesh a sub-mesh (mesh["dp"]) was sliced from, or None: torch 2.x
    keeps it in its mesh resources (device_mesh._mesh_resources), and
    newer releases as the mesh's own _get_root_mesh()."""
    own = getattr(mesh, "_get_root_mesh", None)
    if callable(own):
        try:
            return own()
        except Exception:  # a mesh that was never sliced
            return None
    try:
        from torch.distributed.device_mesh import _mesh_resources  # type: ignore[attr-defined]

        return _mesh_resources.get_root_mesh(mesh)
    except Exception:
        return None


def _outer_dims(t: Any) -> Tuple[Any, List[str]]:
    """A DTensor's mesh's root, and the root's dimensions its own mesh does
    not have (dp's sub-mesh of a (dp, tp) mesh: tp), when it is a named
    slice of a larger mesh; else (None, [])."""
    mesh = t.device_mesh
    root = _root_mesh(mesh)
    names = list(getattr(mesh, "mesh_dim_names", None) or [])
    root_names = list(getattr(root, "mesh_dim_names", None) or []) if root is not None else []
    if root is None or root is mesh or not names or not set(names) <= set(root_names) or root.size() == mesh.size():
        return None, []
    return root, [n for n in root_names if n not in names]


def dtensor_holders(t: Any) -> Optional[List[int]]:
    """The ranks holding the same local part as this rank does by DTensor's
    contract: those whose mesh coordinates agree with this rank's on every
    dimension the tensor is not Replicate over (a Shard's slice or a
    Partial's addend there is this rank's own). A DTensor on a sub-mesh of a
    larger mesh (fully_shard over mesh["dp"] of a (dp, tp) mesh, for a module
    the tensor-parallel plan left out) is held alike by the ranks along the
    dimensions its mesh leaves out: their coordinates are free too. None:
    not a DTensor, or this rank is not on its mesh."""
    if not is_dtensor(t):
        return None
    mesh = t.device_mesh
    coord = mesh.get_coordinate()
    if coord is None:
        return None
    root, _ = _outer_dims(t)
    if root is not None:
        fixed = {n: c for n, p, c in zip(mesh.mesh_dim_names, t.placements, coord) if not p.is_replicate()}
        at_root = tuple(slice(None) if n not in fixed else fixed[n] for n in root.mesh_dim_names)
        return sorted(int(k) for k in root.mesh[at_root].reshape(-1).tolist())
    at = tuple(slice(None) if p.is_replicate() else c for p, c in zip(t.placements, coord))
    return sorted(int(k) for k in mesh.mesh[at].reshape(-1).tolist())


def mesh_dims(t: Any) -> List[Tuple[str, int]]:
    """A DTensor's mesh as (dimension name, size) pairs; an unnamed dimension
    is called by its index ("dim 0")."""
    if not is_dtensor(t):
        return []
    mesh = t.device_mesh
    names = getattr(mesh, "mesh_dim_names", None) or [f"dim {i}" for i in range(mesh.ndim)]
    return [(str(n), int(s)) for n, s in zip(names, mesh.mesh.shape)]


def replicated_over(t: Any) -> str:
    """What a Replicate DTensor's copies span: "" on a 1-D mesh of the whole
    world (every rank), else its Replicate dimensions' names ("tp")."""
    if not is_dtensor(t):
        return ""
    import torch.distributed as dist

    dims = [n for (n, _), p in zip(mesh_dims(t), t.placements) if p.is_replicate()]
    if len(dims) == t.device_mesh.ndim and t.device_mesh.size() == dist.get_world_size():
        return ""
    return ", ".join(dims + _outer_dims(t)[1])   # a sub-mesh's tensor: copies along the dimensions it leaves out


def placements(t: Any) -> str:
    """"(Shard(dim=0),)" as a short text: "Shard(0)", "Replicate(), Shard(0)"."""
    return ", ".join(repr(p).replace("dim=", "") for p in t.placements) if is_dtensor(t) else ""


_FSDP_MODULE: List[Any] = []   # FSDP2's FSDPModule class, or None: looked up once


def fsdp_module_type() -> Any:
    """FSDP2's FSDPModule class (torch 2.6's public name, 2.4's under
    _composable), or None. Never imported on torch 1.x: there importing
    torch.distributed.fsdp fails under Python 3.11 (a dataclass ValueError
    in its sharded-tensor metadata), not with an ImportError."""
    if not _FSDP_MODULE:
        import importlib

        found = None
        if int(torch.__version__.split(".")[0]) >= 2:
            for where in ("torch.distributed.fsdp", "torch.distributed._composable.fsdp"):
                try:
                    found = getattr(importlib.import_module(where), "FSDPModule", None)
                except Exception:   # a build without distributed, a failing import: no FSDP2
                    found = None
                if found is not None:
                    break
        _FSDP_MODULE.append(found)
    return _FSDP_MODULE[0]
