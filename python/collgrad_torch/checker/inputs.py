"""What make_inputs(rank, world) returns, made into the tensors the check perturbs.

make_inputs returns a dict: name -> tensor, nn.Module, or either wrapped in
replicated(). Each floating tensor that requires grad, and each parameter of
a module that requires grad, is a checked leaf; other tensors are data
(passed to fn, never perturbed). Everything floating is made float64 first,
so finite differences resolve (the truth is computed in double, as
torch.autograd.gradcheck does); complex tensors and buffers complex128
(Module.to(float64) would keep only their real part: another model), each
named among the data; integer and bool ones are left as they are.

A replicated input is one logical tensor that every rank holds a copy of (a
data-parallel parameter): its truth perturbs every copy together.

A DTensor input or parameter is checked by DTensor's contract (placements.py).
"""

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import torch

from . import marks
from .placements import dtensor_holders, is_dtensor


class Replicated:
    """Marks an input as one logical tensor held by every rank, or by the
    ranks of `holders` only (see replicated())."""

    def __init__(self, value: Any, holders: Optional[List[int]] = None):
        self.value, self.holders = value, holders


def _group_ranks(group: Any) -> List[int]:
    """The global ranks of a process group (or a list of ranks, as given)."""
    if isinstance(group, (list, tuple, range)):
        return sorted(int(k) for k in group)
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    get = getattr(dist, "get_process_group_ranks", None)  # torch >= 2.0
    if get is not None:
        return sorted(get(group))
    return sorted(c10d._pg_group_ranks[group])  # torch 1.13: {group: {global rank: group rank}}


def replicated(value: Any, *, group: Any = None) -> Any:
    """Declare a tensor or a module's parameters replicated: every rank holds
    a copy of one logical tensor, whose gradient is d(global loss)/d(theta),
    checked on every rank (what data-parallel code means by a parameter).
    With `group` (a process group, or a list of global ranks that includes
    this rank) the copies are held by that group's ranks only: a tensor
    replicated over one dimension of a 2-D layout, another group holding
    another logical tensor of the same name."""
    if not isinstance(value, (torch.Tensor, torch.nn.Module)):
        raise TypeError(f"replicated() takes a tensor or an nn.Module, got {type(value).__name__}")
    return Replicated(value, None if group is None else _group_ranks(group))


class InputError(Exception):
    """make_inputs returned something the check cannot use (exit 2)."""


@dataclass
class Leaf:
    """One checked tensor on this rank. `tensor` is the object fn sees (a
    leaf, a Parameter, or a DTensor); the check owns nothing else of it.
    `holders`: the ranks holding a copy of it when only some do (a group's
    replica, a DTensor's placements), else None: every rank when
    `replicated`, this rank alone when not."""
    name: str
    tensor: torch.Tensor
    replicated: bool
    holders: Optional[List[int]] = None

    def ranks(self, rank: int, world: int) -> List[int]:
        """Every rank holding a copy of this logical tensor, this one among them."""
        if self.holders is not None:
            return self.holders
        return list(range(world)) if self.replicated else [rank]

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
    contract: str = ""          # a framework's tensor-parallel contract over a module input (marks.py)


def _as_double(t: torch.Tensor) -> torch.Tensor:
    if t.is_complex():
        return t.detach().to(torch.complex128)
    if not t.is_floating_point():
        return t
    return t.detach().to(torch.float64).contiguous().requires_grad_(t.requires_grad)


def _double_in_place(t: torch.Tensor) -> torch.Tensor:
    """A module's tensor in double precision: floating to float64, complex to complex128, others as they are."""
    if t.is_complex():
        return t.to(torch.complex128)
    return t.to(torch.float64) if t.is_floating_point() else t


def _module_as_double(name: str, module: torch.nn.Module, data: List[str]) -> None:
    """The module's parameters and buffers in double precision, as
    _double_in_place says (Module._apply, which Module.to uses, so
    parameters stay the same objects); complex buffers named in data."""
    for p_name, p in module.named_parameters():
        if p.is_complex() and p.requires_grad:
            raise InputError(f"{name}.{p_name} is a {str(p.dtype).replace('torch.', '')} parameter that requires "
                             "grad: the check takes real floating parameters (keep its real and imaginary parts "
                             "as two real parameters, or set requires_grad=False)")
    for b_name, b in module.named_buffers():
        if b.is_complex():
            data.append(f"{name}.{b_name}: a {str(b.dtype).replace('torch.', '')} buffer, run as complex128 "
                        "(data, not checked)")
    from .precision import fsdp_policies_as_double

    fsdp_policies_as_double(module, data)
    module._apply(_double_in_place)


def _leaf(name: str, t: torch.Tensor, rep: bool, group: Optional[List[int]]) -> Leaf:
    """A checked tensor: a DTensor's copies are what its placements say
    (whatever `replicated` says of its module), a plain tensor's what
    replicated() declared."""
    held = group
    if is_dtensor(t):  # its placements say, whatever replicated(module, group=) said of the module
        held, rep = dtensor_holders(t), False
    if held is not None and len(held) == 1:
        held = None  # this rank's alone: a per-rank leaf
    return Leaf(name, t, rep or held is not None, held)


def _declared(path: str, names: Set[str]) -> bool:
    """Whether a declaration names this input or parameter path, or a module
    above it ("model" and "model.row" both declare "model.row.bias")."""
    return any(path == n or path.startswith(n + ".") for n in names)


def _unknown_names(raw: Dict[str, Any], names: Set[str]) -> List[str]:
    """Declared names that are neither an input nor a path into a module input's parameters."""
    paths = set(raw)
    for name, value in raw.items():
        module = value.value if isinstance(value, Replicated) else value
        if isinstance(module, torch.nn.Module):
            for p_name, _ in module.named_parameters():
                parts = f"{name}.{p_name}".split(".")
                paths.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
    return sorted(names - paths)


def prepare(raw: Any, replicated_names: Union[bool, Sequence[str]]) -> Inputs:
    """Convert make_inputs' result; `replicated_names` is True (every
    module's parameters), or names to treat as replicated: inputs, or dotted
    paths to a module input's parameters or submodules ("model.row.bias",
    "model.norm"), as the check names them."""
    if not isinstance(raw, dict):
        raise InputError(f"make_inputs must return a dict of name -> tensor or nn.Module, got {type(raw).__name__}")
    names = set(replicated_names) if not isinstance(replicated_names, bool) else set()
    unknown = _unknown_names(raw, names)
    if unknown:
        raise InputError(f"replicated names no input or parameter: {', '.join(unknown)} (inputs: "
                         f"{', '.join(raw)}; a module's parameters by dotted path, model.bias)")
    kwargs: Dict[str, Any] = {}
    leaves: List[Leaf] = []
    data: List[str] = []
    contract = ""
    for name, value in raw.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise InputError(f"input name {name!r} is not a Python identifier (fn receives it as a keyword)")
        rep = name in names
        group: Optional[List[int]] = None
        if isinstance(value, Replicated):
            value, rep, group = value.value, True, value.holders
        if isinstance(value, torch.nn.Module):
            rep = rep or replicated_names is True
            _module_as_double(name, value, data)
            params = [(p_name, p) for p_name, p in value.named_parameters() if p.requires_grad]
            if not params:
                data.append(f"{name}: a module with no parameter that requires grad")
            marked = marks.Marks(value)
            contract = contract or marked.contract
            for p_name, p in params:   # a framework's marks say what a parameter is (marks.py)
                tp = marked.holders(p) if group is None else None
                tp = tp if tp is not None and len(tp) > 1 else None   # a group of one: this rank's own
                leaves.append(_leaf(f"{name}.{p_name}", p, rep or _declared(f"{name}.{p_name}", names) or
                                    tp is not None, group if tp is None else tp))
            kwargs[name] = value
        elif isinstance(value, torch.Tensor):
            if value.is_complex() and value.requires_grad:
                raise InputError(f"input '{name}' is {str(value.dtype).replace('torch.', '')} and requires grad: "
                                 "the check takes real floating tensors (pass torch.view_as_real of it, or its "
                                 "real and imaginary parts as two inputs)")
            t = _as_double(value)
            if t.requires_grad and t.is_floating_point():
                leaves.append(_leaf(name, t, rep, group))
            else:
                why = "requires_grad is False" if t.is_floating_point() else str(value.dtype).replace("torch.", "")
                data.append(f"{name}: {why}{', run as complex128' if t.is_complex() else ''} (data, not checked)")
            kwargs[name] = t
        else:
            kwargs[name] = value  # a number, a string, a list: passed through
            data.append(f"{name}: {type(value).__name__} (passed through)")
    return Inputs(kwargs, leaves, data, contract)


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
        out[name] = Replicated(t, value.holders) if wrapped else t
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
        out[name] = Replicated(t, value.holders) if wrapped else t
    return out


def describe(raw: Any) -> Dict[str, Any]:
    """Each input of make_inputs' result as a reproduction script writes it:
    a tensor's shape, dtype, requires_grad and values; a module or anything
    else by its type only. "replicated" is False, True (every rank), or the
    ranks of the group that holds the copies."""
    out: Dict[str, Any] = {}
    if not isinstance(raw, dict):
        return out
    for name, value in raw.items():
        wrapped = isinstance(value, Replicated)
        t = value.value if wrapped else value
        rep: Any = list(value.holders) if wrapped and value.holders else wrapped
        if is_dtensor(t):
            out[str(name)] = {"kind": "DTensor", "placements": [str(p) for p in t.placements], "replicated": rep}
        elif isinstance(t, torch.Tensor):
            out[str(name)] = {"kind": "tensor", "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                              "requires_grad": bool(t.requires_grad), "replicated": rep,
                              "values": t.detach().cpu().tolist()}
        else:
            out[str(name)] = {"kind": type(t).__name__, "replicated": rep}
    return out
