"""What make_inputs(rank, world) returns, made into the tensors the check perturbs.

make_inputs returns a dict: name -> tensor, nn.Module, or either wrapped in
replicated(). Each floating tensor that requires grad, and each parameter of
a module that requires grad, is a checked leaf; other tensors are data
(passed to fn, never perturbed). Everything floating is made float64 first,
so finite differences resolve (the truth is computed in double, as
torch.autograd.gradcheck does).

A replicated input is one logical tensor that every rank holds a copy of (a
data-parallel parameter): its truth perturbs every copy together.

A DTensor input or parameter (torch 2.x, made in make_inputs, which runs
inside the process group, or by parallelize_module / fully_shard) is checked
by DTensor's contract (DESIGN section 16): its placements say what its local
parts are. Replicate over a mesh of the whole world is one logical tensor
whose copies are equal: a replicated leaf, every copy perturbed together.
Shard and Partial local parts are distinct elements or addends: perturbed
alone. The observed gradient is the one the optimizer's DTensor ops see:
.grad redistributed to the parameter's placements (a Partial gradient
reduced), its local part (worker.py). Replicate over part of a 2-D mesh is
not modelled yet: such a leaf is perturbed per rank, and the check says so.
"""

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Sequence, Union

import torch


class Replicated:
    """Marks an input as one logical tensor held by every rank (see replicated())."""

    def __init__(self, value: Any):
        self.value = value


def replicated(value: Any) -> Any:
    """Declare a tensor or a module's parameters replicated: every rank holds
    a copy of one logical tensor, whose gradient is d(global loss)/d(theta),
    checked on every rank (what data-parallel code means by a parameter)."""
    if not isinstance(value, (torch.Tensor, torch.nn.Module)):
        raise TypeError(f"replicated() takes a tensor or an nn.Module, got {type(value).__name__}")
    return Replicated(value)


class InputError(Exception):
    """make_inputs returned something the check cannot use (exit 2)."""


def is_dtensor(t: Any) -> bool:
    """A DTensor (torch 2.x), known by its parts so torch 1.x needs no import."""
    return isinstance(t, torch.Tensor) and hasattr(t, "_local_tensor") and hasattr(t, "placements")


def replicated_over_world(t: Any) -> bool:
    """A DTensor whose every placement is Replicate on a mesh of the whole
    world: one logical tensor, a copy on every rank (DTensor's contract)."""
    if not is_dtensor(t) or not all(p.is_replicate() for p in t.placements):
        return False
    import torch.distributed as dist

    return dist.is_initialized() and t.device_mesh.size() == dist.get_world_size()


def placements(t: Any) -> str:
    """"(Shard(dim=0),)" as a short text: "Shard(0)", "Replicate(), Shard(0)"."""
    return ", ".join(str(p).replace("dim=", "") for p in t.placements) if is_dtensor(t) else ""


@dataclass
class Leaf:
    """One checked tensor on this rank. `tensor` is the object fn sees (a
    leaf, a Parameter, or a DTensor); the check owns nothing else of it."""
    name: str
    tensor: torch.Tensor
    replicated: bool

    @property
    def local(self) -> torch.Tensor:
        """What this rank holds and the finite differences perturb: a
        DTensor's local shard (or copy, or partial value), else the tensor."""
        return self.tensor._local_tensor if is_dtensor(self.tensor) else self.tensor  # type: ignore[attr-defined]


@dataclass
class Inputs:
    kwargs: Dict[str, Any]      # what fn(rank, world, **kwargs) receives
    leaves: List[Leaf]          # what is checked, in a fixed order
    data: List[str]             # inputs passed through unchecked, with why


def _as_double(t: torch.Tensor) -> torch.Tensor:
    if not t.is_floating_point():
        return t
    return t.detach().to(torch.float64).contiguous().requires_grad_(t.requires_grad)


def prepare(raw: Any, replicated_names: Union[bool, Sequence[str]]) -> Inputs:
    """Convert make_inputs' result; `replicated_names` is True (every
    module's parameters), or the input names to treat as replicated."""
    if not isinstance(raw, dict):
        raise InputError(f"make_inputs must return a dict of name -> tensor or nn.Module, got {type(raw).__name__}")
    names = set(replicated_names) if not isinstance(replicated_names, bool) else set()
    unknown = names - set(raw)
    if unknown:
        raise InputError(f"replicated names no input: {', '.join(sorted(unknown))} (inputs: {', '.join(raw)})")
    kwargs: Dict[str, Any] = {}
    leaves: List[Leaf] = []
    data: List[str] = []
    for name, value in raw.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise InputError(f"input name {name!r} is not a Python identifier (fn receives it as a keyword)")
        rep = name in names
        if isinstance(value, Replicated):
            value, rep = value.value, True
        if isinstance(value, torch.nn.Module):
            rep = rep or replicated_names is True
            value.to(torch.float64)
            params = [(p_name, p) for p_name, p in value.named_parameters() if p.requires_grad]
            if not params:
                data.append(f"{name}: a module with no parameter that requires grad")
            leaves.extend(Leaf(f"{name}.{p_name}", p, rep or replicated_over_world(p)) for p_name, p in params)
            kwargs[name] = value
        elif isinstance(value, torch.Tensor):
            if value.is_complex() and value.requires_grad:
                raise InputError(f"input '{name}' is {str(value.dtype).replace('torch.', '')} and requires grad: "
                                 "the check takes real floating tensors (pass torch.view_as_real of it, or its "
                                 "real and imaginary parts as two inputs)")
            t = _as_double(value)
            if t.requires_grad and t.is_floating_point():
                leaves.append(Leaf(name, t, rep or replicated_over_world(t)))
            else:
                data.append(f"{name}: {'requires_grad is False' if t.is_floating_point() else str(t.dtype)} (data, not checked)")
            kwargs[name] = t
        else:
            kwargs[name] = value  # a number, a string, a list: passed through
            data.append(f"{name}: {type(value).__name__} (passed through)")
    return Inputs(kwargs, leaves, data)


def snapshot(leaves: Iterable[Leaf]) -> List[torch.Tensor]:
    return [leaf.local.detach().clone() for leaf in leaves]


def restore(leaves: Iterable[Leaf], saved: Sequence[torch.Tensor]) -> None:
    with torch.no_grad():
        for leaf, s in zip(leaves, saved):
            leaf.local.copy_(s)


def _cut(t: torch.Tensor, caps: Sequence[int], squeeze: bool) -> torch.Tensor:
    if len(caps) != t.dim():
        return t
    out = t.detach()[tuple(slice(0, max(1, c)) for c in caps)]
    if squeeze:
        out = out.reshape([n for n in out.shape if n != 1])
    if out.is_floating_point():
        out = out.clone().requires_grad_(t.requires_grad)
    return out


def _small(t: torch.Tensor) -> torch.Tensor:
    """Small integers where the tensor held floats: the nearest in [-3, 3]."""
    if not t.is_floating_point():
        return t
    return torch.round(t.detach()).clamp(-3, 3).requires_grad_(t.requires_grad)


def transform(raw: Any, how: Dict[str, Any]) -> Any:
    """make_inputs' result made smaller (shrink.py): how["caps"][name] caps
    each dimension of a tensor input (the leading part is kept: every rank
    cuts alike, and uneven inputs stay uneven), how["squeeze"] lists the
    inputs whose size-1 dimensions go, how["small"] rounds every floating
    tensor input to an integer in [-3, 3]. Modules and other inputs pass
    unchanged."""
    if not how or not isinstance(raw, dict):
        return raw
    caps, squeeze, small = how.get("caps", {}), set(how.get("squeeze", [])), how.get("small", False)
    out: Dict[str, Any] = {}
    for name, value in raw.items():
        wrapped = isinstance(value, Replicated)
        t = value.value if wrapped else value
        if isinstance(t, torch.Tensor) and not is_dtensor(t):
            if name in caps or name in squeeze:
                t = _cut(t, caps.get(name, list(t.shape)), name in squeeze)
            if small:
                t = _small(t)
        out[name] = Replicated(t) if wrapped else t
    return out


def place(raw: Any, device: Any) -> Any:
    """make_inputs' result on the rank's device (the GPU its NCCL group uses;
    None: left where make_inputs made it): tensors copied there keeping
    requires_grad, modules moved. DTensors and other inputs pass unchanged
    (a DTensor's mesh says where it lives)."""
    if device is None or not isinstance(raw, dict):
        return raw
    out: Dict[str, Any] = {}
    for name, value in raw.items():
        wrapped = isinstance(value, Replicated)
        t = value.value if wrapped else value
        if isinstance(t, torch.Tensor) and not is_dtensor(t):
            t = t.detach().to(device).requires_grad_(t.requires_grad)
        elif isinstance(t, torch.nn.Module):
            t = t.to(device)
        out[name] = Replicated(t) if wrapped else t
    return out


def describe(raw: Any) -> Dict[str, Any]:
    """Each input of make_inputs' result as a reproduction script writes it:
    a tensor's shape, dtype, requires_grad and values; a module or anything
    else by its type only."""
    out: Dict[str, Any] = {}
    if not isinstance(raw, dict):
        return out
    for name, value in raw.items():
        wrapped = isinstance(value, Replicated)
        t = value.value if wrapped else value
        if is_dtensor(t):
            out[str(name)] = {"kind": "DTensor", "placements": [str(p) for p in t.placements], "replicated": wrapped}
        elif isinstance(t, torch.Tensor):
            out[str(name)] = {"kind": "tensor", "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                              "requires_grad": bool(t.requires_grad), "replicated": wrapped,
                              "values": t.detach().cpu().tolist()}
        else:
            out[str(name)] = {"kind": type(t).__name__, "replicated": wrapped}
    return out
