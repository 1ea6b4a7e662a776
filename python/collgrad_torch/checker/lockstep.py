"""What every rank of a check does in lockstep with the others after the
analytic pass: evaluate the user's code at each point of the finite
differences (its inputs restored, moved by one step where it holds what the
point moves, its random state restored), and agree with the other ranks,
over the check's own store, on the points of the next round. Also the count
of backward calls the analytic pass makes (a step's microbatches)."""

import contextlib
import json
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from .rng_state import RngState


class TransportError(Exception):
    """The machinery between the ranks failed outside the user's code: the
    store, a wait for the other ranks (exit 3)."""


@contextlib.contextmanager
def counting_backward() -> Iterator[List[int]]:
    """How many times the analytic pass called backward (Tensor.backward and
    torch.autograd.backward, which pipelining schedules call per microbatch):
    a step that accumulates over k microbatches calls it k times, and a
    gradient off by k is then read as that count first (patterns)."""
    import torch

    count = [0]
    tensor_backward, autograd_backward = torch.Tensor.backward, torch.autograd.backward

    def counted_tensor(self: Any, *a: Any, **k: Any) -> Any:
        count[0] += 1
        return tensor_backward(self, *a, **k)

    def counted_autograd(*a: Any, **k: Any) -> Any:
        if not inside[0]:
            count[0] += 1
        return autograd_backward(*a, **k)

    inside = [False]

    def tensor_entry(self: Any, *a: Any, **k: Any) -> Any:   # Tensor.backward calls autograd.backward: one call
        inside[0] = True
        try:
            return counted_tensor(self, *a, **k)
        finally:
            inside[0] = False

    torch.Tensor.backward = tensor_entry  # type: ignore[method-assign,assignment]
    torch.autograd.backward = counted_autograd  # type: ignore[assignment]
    try:
        yield count
    finally:
        torch.Tensor.backward = tensor_backward  # type: ignore[method-assign,assignment]
        torch.autograd.backward = autograd_backward  # type: ignore[assignment]


def evaluate(r: Any, prog: Any, ins: Any, saved: List[Any], rng: RngState,
              perturb: Optional[Tuple[Any, int, float, Any]], wide: Any = None, watch: Any = None) -> float:
    """This rank's loss at one point: its inputs as saved, moved by
    (leaf, element or -1, step, direction) when it holds what the point moves;
    under `wide` (a precision.Float64) every lower-precision request float64,
    under `watch` (a precision.Watch) as written, what comes out lower noted."""
    import contextlib

    import torch

    from . import precision

    from . import inputs

    inputs.restore(ins.leaves, saved)
    if perturb is not None:
        leaf, elem, h, along = perturb
        with torch.no_grad():
            flat = leaf.local.view(-1)
            if elem >= 0:
                flat[elem] += h
            else:
                flat.add_(along, alpha=h)
    for l in ins.leaves:
        l.tensor.grad = None
    _reshard(ins.kwargs)
    rng.restore()
    with torch.enable_grad():  # as the user's code runs: some code asks requires_grad
        with precision.float64_forward(wide) if wide is not None else watch or contextlib.nullcontext():
            return prog.run(backward=False)


def _reshard(kwargs: Mapping[str, Any]) -> None:
    """FSDP2 modules' unsharded parameters freed, so the next forward
    all-gathers the (perturbed) shards: a module kept unsharded after its
    forward (reshard_after_forward=False, torchtitan's root: the final norm
    and head) would otherwise run every point on the first point's values."""
    import torch

    from .placements import fsdp_module_type

    fsdp = fsdp_module_type()
    if fsdp is None:
        return
    for value in kwargs.values():
        if isinstance(value, torch.nn.Module):
            for m in value.modules():
                if isinstance(m, fsdp):
                    m.reshard()


def exchange(r: Any, store: Any, key: str, mine: Mapping[str, Any], timeout: float) -> List[Any]:
    """Every rank's `mine` for this key, through the check's own store (never
    the backend under test): the ranks then decide alike."""
    import datetime

    try:
        store.set(f"{key}/{r.rank}", json.dumps(mine))
        keys = [f"{key}/{k}" for k in range(r.world)]
        store.wait(keys, datetime.timedelta(seconds=2 * timeout + 10))
        return [json.loads(store.get(k).decode()) for k in keys]
    except Exception as e:  # the store, not the user's code
        raise TransportError(f"exchanging the finite differences' losses through the store: "
                             f"{type(e).__name__}: {e}") from e


def finite_differences(r: Any, prog: Any, ins: Any, saved: List[Any], rng: RngState, tensors: List[Any],
                       mode: str, held: List[Any], store: Any
                       ) -> Tuple[List[float], List[Dict[str, Any]], Optional[str], bool]:
    """Every point of the schedule, on every rank in lockstep, perturbing what
    this rank holds: the unperturbed repeats, then a round per step of
    fd.STEPS, each after the first for the differences every rank's losses
    left unresolved. The first repeat runs the code as written, watched:
    where it computes in a lower precision than float64, every point after it
    runs widened (precision.py). Returns (the repeats' losses, this rank's
    rounds, each with "rounding": its losses' relative rounding; the lowest
    dtype the forward asked for, or None; whether the points ran widened)."""
    from collgrad_core import fd_error
    from . import fd, precision

    spec = r.spec
    by_index = {t.index: leaf for t, leaf in held}
    r.status(f"finite differences: repeat 1 of {fd.BASE_POINTS}")
    watch = precision.Watch()
    base: List[float] = [evaluate(r, prog, ins, saved, rng, None, watch=watch)]
    wide = precision.widen(watch, prog.notes)
    if wide is not None:   # the code's own precision is not the truth's: the repeats are all widened
        base = []
    for j in range(len(base), fd.BASE_POINTS):
        r.status(f"finite differences: repeat {j + 1} of {fd.BASE_POINTS}")
        base.append(evaluate(r, prog, ins, saved, rng, None, wide))
    rounds: List[Dict[str, Any]] = []                       # this rank's
    everyone: List[List[Dict[str, Any]]] = [[] for _ in range(r.world)]  # every rank's, as exchanged
    only: Optional[List[fd.Diff]] = None
    directions: Dict[int, Any] = {}   # fast mode: each tensor's, made once
    steps = [h for h in fd.STEPS if h >= spec["step_size"]] or [spec["step_size"]]
    for i, h in enumerate(steps):
        items = fd.schedule(tensors, mode, only)
        losses: List[float] = []
        for j, (index, elem, off) in enumerate(items):
            r.status(f"finite differences at step {h:g}: point {j + 1} of {len(items)}", force=(j == 0))
            target = by_index.get(index)
            along = None
            if target is not None and elem < 0:
                if index not in directions:
                    directions[index] = fd.direction(spec["seed"], index, target.local.numel())
                along = directions[index]
            losses.append(evaluate(r, prog, ins, saved, rng,
                                    None if target is None else (target, elem, off * h, along), wide))
        lowest = max([prog.loss_dtype] + ([wide.lowest()] if wide is not None and wide.lowest() else []),
                     key=precision.unit_roundoff)
        rounds.append({"step": h, "diffs": None if only is None else [list(d) for d in only], "losses": losses,
                       "rounding": fd_error.rounding_of(precision.unit_roundoff(lowest))})
        if i + 1 == len(steps):
            break
        for k, theirs in enumerate(exchange(r, store, f"fd/{i}", rounds[-1], spec["timeout"])):
            everyone[k].append(theirs)
        only = fd.unresolved(everyone, tensors, mode, spec["atol"], spec["rtol"])
        if not only:
            break
    precision.still_low(wide, prog.notes)
    return base, rounds, precision.lowest_name(watch), wide is not None
