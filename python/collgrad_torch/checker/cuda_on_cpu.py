"""cpu_for_cuda=True (`--cpu-for-cuda`): code written for GPUs checked on
CPU ranks, unchanged, on a machine without one (a CPU-only CI runner).

Megatron-core allocates with device=torch.cuda.current_device() (its
gather_output and sequence-parallel paths), torchtitan's parallelize
functions take device_type "cuda", and models call .cuda(). For the whole
of a rank's check (make_inputs, fn or the step, every evaluation) this
replaces, in the rank:

    a CUDA device argument       "cuda", "cuda:N", torch.device("cuda", N), or a
                                 device index N (torch reads an int as cuda:N) given
                                 as device= to any torch function, or to Tensor.to:
                                 "cpu"
    Tensor.cuda()                the tensor itself
    DeviceMesh("cuda", ...),     a CPU mesh (torchtitan's ParallelDims asks for one with
    init_device_mesh("cuda", ...)  device_type "cuda" wherever no accelerator is found)
    torch.cuda.current_device()  0
    torch.cuda.set_device(),     nothing
    torch.cuda.synchronize()

and the same inside custom autograd Functions' backward (Megatron's
mappings allocate there), which the engine runs outside the rank's
function modes: BackwardCFunction.apply enters the mode around them.

On a machine with GPUs leave it off: the same code runs on CUDA tensors
with backend="nccl".
"""

import contextlib
from typing import Any, Dict, Iterator, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

CPU = torch.device("cpu")


def _cuda(device: Any) -> bool:
    if isinstance(device, bool):
        return False
    if isinstance(device, int):
        return True
    if isinstance(device, str):
        return device.split(":")[0] == "cuda"
    return isinstance(device, torch.device) and device.type == "cuda"


def _on_cpu(device: Any) -> Any:
    return CPU if _cuda(device) else device


class _CpuForCuda(TorchFunctionMode):
    def __torch_function__(self, func: Any, types: Any, args: Tuple[Any, ...] = (),
                           kwargs: Optional[Dict[str, Any]] = None) -> Any:
        kwargs = dict(kwargs or {})
        if "device" in kwargs:
            kwargs["device"] = _on_cpu(kwargs["device"])
        if func is torch.Tensor.cuda:
            return args[0]
        if func is torch.Tensor.to:   # x.to("cuda"), x.to(0), x.to(torch.device("cuda"), dtype)
            args = args[:1] + tuple(_on_cpu(a) for a in args[1:])
        return func(*args, **kwargs)


@contextlib.contextmanager
def active(on: bool) -> Iterator[None]:
    """The replacements above while the block runs, when on."""
    if not on:
        yield
        return
    saved = {n: getattr(torch.cuda, n) for n in ("current_device", "set_device", "synchronize")}
    torch.cuda.current_device = lambda: 0   # type: ignore[assignment]
    torch.cuda.set_device = lambda device: None   # type: ignore[assignment]
    torch.cuda.synchronize = lambda device=None: None   # type: ignore[assignment]
    function = torch.autograd.function.BackwardCFunction
    backward = function.apply

    def apply_on_cpu(self: Any, *args: Any) -> Any:
        with _CpuForCuda():
            return backward(self, *args)

    function.apply = apply_on_cpu   # type: ignore[method-assign,assignment]
    mesh = _device_mesh()
    mesh_init = mesh.__init__ if mesh is not None else None

    def mesh_on_cpu(self: Any, device_type: Any, *args: Any, **kwargs: Any) -> None:
        assert mesh_init is not None
        mesh_init(self, "cpu" if _cuda(device_type) else device_type, *args, **kwargs)

    if mesh is not None:
        mesh.__init__ = mesh_on_cpu   # type: ignore[method-assign,assignment]
    try:
        with _CpuForCuda():
            yield
    finally:
        function.apply = backward   # type: ignore[method-assign,assignment]
        if mesh is not None:
            mesh.__init__ = mesh_init   # type: ignore[method-assign,assignment]
        for n, f in saved.items():
            setattr(torch.cuda, n, f)


def _device_mesh() -> Any:
    """torch 2.x's DeviceMesh class (init_device_mesh builds one), or None."""
    try:
        from torch.distributed.device_mesh import DeviceMesh
    except ImportError:   # torch 1.13
        return None
    return DeviceMesh
