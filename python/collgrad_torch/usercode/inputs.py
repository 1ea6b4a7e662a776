"""What make_inputs(rank, world) returns, made into the tensors the check perturbs.

make_inputs returns a dict: name -> tensor, nn.Module, or either wrapped in
replicated(). Each floating tensor that requires grad, and each parameter of
a module that requires grad, is a checked leaf; other tensors are data
(passed to fn, never perturbed). Everything floating is made float64 first,
so finite differences resolve (the truth is computed in double, as
torch.autograd.gradcheck does).

A replicated input is one logical tensor that every rank holds a copy of (a
data-parallel parameter): its truth perturbs every copy together.
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


@dataclass
class Leaf:
    """One checked tensor on this rank. `tensor` is the object fn sees (a
    leaf or a Parameter); the check owns nothing else of it."""
    name: str
    tensor: torch.Tensor
    replicated: bool


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
            leaves.extend(Leaf(f"{name}.{p_name}", p, rep) for p_name, p in params)
            kwargs[name] = value
        elif isinstance(value, torch.Tensor):
            t = _as_double(value)
            if t.requires_grad and t.is_floating_point():
                leaves.append(Leaf(name, t, rep))
            else:
                data.append(f"{name}: {'requires_grad is False' if t.is_floating_point() else str(t.dtype)} (data, not checked)")
            kwargs[name] = t
        else:
            kwargs[name] = value  # a number, a string, a list: passed through
            data.append(f"{name}: {type(value).__name__} (passed through)")
    return Inputs(kwargs, leaves, data)


def snapshot(leaves: Iterable[Leaf]) -> List[torch.Tensor]:
    return [leaf.tensor.detach().clone() for leaf in leaves]


def restore(leaves: Iterable[Leaf], saved: Sequence[torch.Tensor]) -> None:
    with torch.no_grad():
        for leaf, s in zip(leaves, saved):
            leaf.tensor.copy_(s)
