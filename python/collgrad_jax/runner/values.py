"""The values of an SPMD run of a case program.

A number the program computes from rank and world is known, at trace time,
on every device: PerDevice holds its W values (rank is (0, 1, ..., W-1)), so
shapes, slice bounds and branches that depend on the rank stay concrete
where the devices agree, and a tensor built from a rank-dependent number
reads its device's entry of a table. A tensor is the device's local jax
array with what autograd in PyTorch would know of it: whether it requires a
gradient, the slots (differentiable bindings) it depends on, and the root
of a collective whose output only counts there (reduce, gather).
"""

from dataclasses import dataclass, field
from typing import Any, Callable, FrozenSet, Optional, Tuple


class Unsupported(Exception):
    """shard_map cannot express this program (the job is skipped with the reason)."""


@dataclass(frozen=True)
class PerDevice:
    """A number on each device, device order."""
    values: Tuple[float, ...]

    @property
    def uniform(self) -> Optional[float]:
        """The one value every device holds, or None."""
        first = self.values[0]
        same = all(v == first or (v != v and first != first) for v in self.values)
        return first if same else None

    def map(self, fn: Callable[[float], float]) -> "PerDevice":
        return PerDevice(tuple(fn(v) for v in self.values))

    def zip(self, other: "PerDevice", fn: Callable[[float, float], float]) -> "PerDevice":
        return PerDevice(tuple(fn(a, b) for a, b in zip(self.values, other.values)))


@dataclass
class Tensor:
    """A device's local value; `x` is a jax array (a tracer inside shard_map)."""
    x: Any
    grad: bool = False                       # requires a gradient (a param, or computed from one)
    slots: FrozenSet[int] = field(default_factory=frozenset)  # the differentiable bindings it depends on
    root_only: Optional[int] = None          # reduce/gather output: its gradient counts on this device only
    numbers: Optional[PerDevice] = None      # a number bound as a tensor (rows = 16 / world): its values, so
                                             # it still serves as a size or an index, as in the C interpreter

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self.x.shape)


def derived(x: Any, *inputs: Any) -> Tensor:
    """A tensor computed from inputs: it requires a gradient, and depends on
    the slots, of any tensor among them."""
    ts = [t for t in inputs if isinstance(t, Tensor)]
    return Tensor(x, any(t.grad for t in ts), frozenset().union(*(t.slots for t in ts)))
