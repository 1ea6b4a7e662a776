"""Float32 code checked in float64 (design.md section 14; issue 61 item 1).

The check makes the inputs float64 (inputs.py), but a model may compute in a
lower precision where it asks to: transformers' loss calls logits.float(),
its RMSNorm .to(torch.float32), eager attention softmax(dtype=float32),
torchtitan's RoPE .float(), a training step autocast. The observed gradient
is the one the user's dtypes give; the truth must not be: a central
difference of a loss rounded to float32 at h = 1e-6 is noise. Two function
modes over the user's forward:

- Watch (the analytic pass): records where a float32, float16 or bfloat16
  tensor first comes out; nothing changes.
- Float64 (the finite differences' forwards, once Watch saw one): every
  request for a lower precision is float64 instead: .float(), .half(),
  .bfloat16(), .to()/.type() with such a dtype, a dtype= keyword (factories,
  softmax), the default dtype, autocast; what still comes out lower is
  recorded, and the loss's own rounding enters the error bound
  (fd_error.rounding_of).
"""

import contextlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

LOW = (torch.float32, torch.float16, torch.bfloat16)
_NARROWING = {torch.Tensor.float, torch.Tensor.half, torch.Tensor.bfloat16}
SHOWN = 3   # functions named per note


def _name(func: Any) -> str:
    owner = getattr(func, "__objclass__", None) or getattr(func, "__module__", None)
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or str(func)
    tensor = owner is torch.Tensor or getattr(owner, "__name__", "") in ("TensorBase", "_TensorBase")
    if tensor:   # torch 2.x's methods live on torch._C.TensorBase: Tensor.float, not Tensor.TensorBase.float
        name = name.split(".")[-1]
    prefix = "Tensor" if tensor else str(owner or "")
    return f"{prefix}.{name}".replace("torch._C._VariableFunctions.", "torch.") if prefix else name


def _low_out(out: Any) -> Optional[torch.dtype]:
    if isinstance(out, torch.Tensor):
        return out.dtype if out.dtype in LOW else None
    if isinstance(out, (list, tuple)):
        for o in out:
            d = _low_out(o)
            if d is not None:
                return d
    return None


class _Recording(TorchFunctionMode):
    """A mode that records the functions whose output is lower than float64."""

    def __init__(self) -> None:
        super().__init__()
        self.low: Dict[str, torch.dtype] = {}   # function -> the dtype it gave, in first-seen order

    def record(self, func: Any, out: Any) -> Any:
        d = _low_out(out)
        if d is not None and len(self.low) < 64:
            self.low.setdefault(_name(func), d)
        return out

    def lowest(self) -> Optional[torch.dtype]:
        """The coarsest dtype seen (bfloat16 before float16 before float32), or None."""
        return max(self.low.values(), key=unit_roundoff, default=None)

    def named(self) -> str:
        shown = [f"{f} ({str(d).replace('torch.', '')})" for f, d in list(self.low.items())[:SHOWN]]
        more = len(self.low) - SHOWN
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


class Watch(_Recording):
    def __torch_function__(self, func: Any, types: Any, args: Tuple[Any, ...] = (),
                           kwargs: Optional[Dict[str, Any]] = None) -> Any:
        return self.record(func, func(*args, **(kwargs or {})))


def _wider(a: Any) -> Any:
    return torch.float64 if isinstance(a, torch.dtype) and a in LOW else a


def _autocasting() -> List[str]:
    """The device types autocast is on for here (torch 1.13's and 2.x's spellings)."""
    on = []
    for dev in ("cpu", "cuda"):
        try:
            enabled = torch.is_autocast_enabled(dev)  # type: ignore[call-arg]
        except TypeError:   # torch < 2.4: no device argument
            enabled = torch.is_autocast_enabled() if dev == "cuda" else torch.is_autocast_cpu_enabled()
        if enabled:
            on.append(dev)
    return on


class Float64(_Recording):
    def __torch_function__(self, func: Any, types: Any, args: Tuple[Any, ...] = (),
                           kwargs: Optional[Dict[str, Any]] = None) -> Any:
        kwargs = {k: _wider(v) for k, v in (kwargs or {}).items()}
        if func in _NARROWING:
            func = torch.Tensor.double
        elif func is torch.Tensor.to and len(args) > 1 and isinstance(args[1], torch.Tensor) \
                and args[1].dtype in LOW:   # x.to(other): other's device, float64
            other: torch.Tensor = args[1]
            args, kwargs = (args[0],), dict(kwargs, device=other.device, dtype=torch.float64)
        args = tuple(_wider(a) for a in args)
        casting = _autocasting()
        if not casting:
            return self.record(func, func(*args, **kwargs))
        with contextlib.ExitStack() as stack:   # autocast off around this call: its ops in float64
            for dev in casting:
                stack.enter_context(torch.autocast(dev, enabled=False))
            return self.record(func, func(*args, **kwargs))


@contextlib.contextmanager
def default_float64() -> Iterator[None]:
    """Every run of the user's code: the default dtype float64, as the
    inputs are (inputs.py made them so), so a tensor made without a dtype
    (torch.linspace(...), torch.zeros(n) in the forward) meets the float64
    parameters as the code's float32 one met its float32 ones; what the
    code asks for by name stays as written until the finite differences."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(default)


@contextlib.contextmanager
def float64_forward(mode: Float64) -> Iterator[None]:
    """The user's forward with every lower-precision request made float64."""
    default = torch.get_default_dtype()
    with mode:
        torch.set_default_dtype(torch.float64)
        try:
            yield
        finally:
            torch.set_default_dtype(default)


def widen(watch: Watch, notes: List[str]) -> Optional[Float64]:
    """The mode for the finite differences' forwards: Float64 where the
    analytic pass computed in a lower precision (said in notes), else none
    (the forward runs untouched)."""
    if not watch.low:
        return None
    notes.append(f"the forward computes in a lower precision where it asks ({watch.named()}): the observed "
                 "gradient is that of its own dtypes; the finite differences ran those requests in float64")
    return Float64()


def still_low(wide: Optional[Float64], notes: List[str]) -> None:
    """Said in notes: what stayed lower than float64 in the widened forwards."""
    if wide is not None and wide.low:
        notes.append(f"under the check's float64 forward these still computed in a lower precision: "
                     f"{wide.named()}: the finite differences carry that rounding (their error bound "
                     "includes it)")


# The tolerances a gradient computed in a lower precision is judged with, where the user gave none:
# (atol, rtol) by the lowest dtype the analytic pass computed in. float32 keeps the defaults
# (gradcheck's 1e-5 and 1e-3, far above float32's rounding); float16 and bfloat16 round at 2^-11 and
# 2^-8 per operation, so their gradients are judged about ten times their unit roundoff wide.
TOLERANCE = {"float16": (1e-3, 1e-2), "bfloat16": (1e-2, 5e-2)}


def lowest_name(watch: Watch) -> Optional[str]:
    low = watch.lowest()
    return None if low is None else str(low).replace("torch.", "")


def dtype_tolerance(lowest: List[Optional[str]], given: bool, result: Any) -> None:
    """Widen result's tolerances to the lowest precision any rank's analytic
    pass computed in (TOLERANCE), unless the user gave tolerances; said in
    its notes."""
    names = [n for n in lowest if n in TOLERANCE]
    if given or not names:
        return
    name = max(names, key=lambda n: TOLERANCE[n][1])
    atol, rtol = TOLERANCE[name]
    if atol > result.atol or rtol > result.rtol:
        result.atol, result.rtol = max(result.atol, atol), max(result.rtol, rtol)
        result.notes.append(f"the gradients were computed in {name} (autocast or a cast in the code): judged "
                            f"with {name}'s tolerances, atol {result.atol:g} and rtol {result.rtol:g} (give "
                            "atol and rtol to choose others)")


def unit_roundoff(dtype: Any) -> float:
    """A loss dtype's unit roundoff (float64's for a Python number)."""
    if isinstance(dtype, torch.dtype) and dtype.is_floating_point:
        return float(torch.finfo(dtype).eps) / 2
    return 2.0 ** -53


def fsdp_policies_as_double(module: Any, data: List[str]) -> None:
    """Before the check makes a module float64 (inputs.py): an FSDP2
    MixedPrecisionPolicy whose dtypes equal the parameters' own casts
    nothing (torchtitan's mixed_precision_param "float32" on float32
    parameters); made float64 with them, it still casts nothing, where left
    as it is it would cast the float64 parameters, inputs and gradients back
    to float32. A policy that casts to another dtype (bfloat16) is the code's
    own request: kept, and named in data."""
    import dataclasses

    from .placements import fsdp_module_type

    fsdp = fsdp_module_type()
    if fsdp is None:
        return
    for m in module.modules():
        state = m._get_fsdp_state() if isinstance(m, fsdp) else None
        group = getattr(state, "_fsdp_param_group", None)
        params = list(getattr(group, "fsdp_params", None) or [])
        if not params:
            continue
        own = params[0].sharded_param.dtype

        def same(policy: Any) -> Any:
            wide = {f: torch.float64 for f in ("param_dtype", "reduce_dtype", "output_dtype")
                    if getattr(policy, f, None) == own and own in LOW}
            kept = [f"{f} {str(getattr(policy, f)).replace('torch.', '')}" for f in ("param_dtype", "reduce_dtype")
                    if getattr(policy, f, None) not in (None, own, torch.float64)]
            if kept:
                data.append(f"an FSDP MixedPrecisionPolicy casts ({', '.join(kept)}): the code's own precision")
            return dataclasses.replace(policy, **wide) if wide else policy

        state._mp_policy = same(state._mp_policy)  # type: ignore[union-attr]
        for p in params:
            p.mp_policy = same(p.mp_policy)
