"""The process group every rank joins: a FileStore in the run's private
directory (no port to race for, nothing listening), then
init_process_group with the backend under test.

The backend is "gloo", "nccl", "mpi", the name of a backend some imported
module registered, or "MODULE:NAME" / "path/to/file.py:NAME": import MODULE
(or run the file) first, which registers NAME with
torch.distributed.Backend.register_backend -- how a third-party process
group is validated.
"""

import datetime
import importlib
import importlib.util
import os
import re
import sys
from typing import Any, Optional, Tuple


class BackendError(Exception):
    """The backend could not be found or imported."""


BUILT_IN = ("gloo", "nccl", "mpi", "ucc", "xccl")
DEVICE_MAP = re.compile(r"(cpu|cuda):\w+(,(cpu|cuda):\w+)*")  # torch 2.x's "cpu:gloo,cuda:nccl"


def _registered(name: str) -> bool:
    """Whether torch knows backend `name`: built in (and built), or registered
    by an import (Backend.register_backend sets Backend.NAME in 1.13 and 2.x),
    or by an entry point that torch 2.x loads on first use."""
    from torch.distributed import Backend

    ensure = getattr(Backend, "_ensure_backend_registered", None)
    if ensure is not None:
        try:
            ensure(name)
        except Exception:  # a broken entry point: init_process_group says what
            return True
    return hasattr(Backend, name.upper())


def resolve(spec: str) -> str:
    """The backend name to initialise, after importing what `spec` names;
    BackendError when nothing registers it."""
    if DEVICE_MAP.fullmatch(spec):
        return spec
    if ":" not in spec:
        if not _registered(spec):
            from torch.distributed import Backend

            known = [n for n in BUILT_IN if hasattr(Backend, n.upper())]
            raise BackendError(f"unknown backend '{spec}': this torch knows {', '.join(known)}; a third-party one "
                               "is MODULE:NAME or FILE.py:NAME, which registers NAME")
        return spec
    where, name = spec.rsplit(":", 1)
    if not where or not name:
        raise BackendError(f"expected MODULE:NAME or FILE.py:NAME, got '{spec}'")
    try:
        if where.endswith(".py"):
            module_name = "collgrad_backend_" + os.path.basename(where)[:-3]
            if module_name in sys.modules:  # a warm rank's later check: registered already
                return name
            spec_obj = importlib.util.spec_from_file_location(module_name, where)
            if spec_obj is None or spec_obj.loader is None:
                raise BackendError(f"{where}: not a Python file")
            module = importlib.util.module_from_spec(spec_obj)
            sys.modules[module_name] = module
            spec_obj.loader.exec_module(module)
        else:
            importlib.import_module(where)
    except BackendError:
        raise
    except Exception as e:  # the module is the user's code: report whatever it raised
        raise BackendError(f"importing {where} for backend {name} failed: {type(e).__name__}: {e}") from None
    if not _registered(name):
        raise BackendError(f"{where} registers no backend '{name}' (it must call "
                           f"torch.distributed.Backend.register_backend('{name}', ...) when imported)")
    return name


def share_gpu(name: str, rank: int) -> None:
    """Under COLLGRAD_NCCL_SHARE_GPU=1, ranks sharing a GPU: NCCL refuses two
    ranks of one host on one device ("Duplicate GPU detected"), so each rank
    claims its own host and the ranks talk over NCCL's network transport, as
    the C tool's nccl transport does under the same variable (docs/gpu.md:
    several ranks on one GPU)."""
    if name == "nccl" and os.environ.get("COLLGRAD_NCCL_SHARE_GPU") == "1":
        os.environ["NCCL_HOSTID"] = f"collgrad-rank-{rank}"
        os.environ["NCCL_P2P_DISABLE"] = "1"
        os.environ["NCCL_SHM_DISABLE"] = "1"


def init(spec: str, store_path: str, rank: int, world: int, timeout_s: float) -> Tuple[object, str]:
    """Join the default process group; returns (store, backend name)."""
    import torch.distributed as dist

    name = resolve(spec)
    share_gpu(name, rank)
    store = dist.FileStore(store_path, world)
    dist.init_process_group(name, store=store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout_s))
    return store, name


def device(name: str, rank: int) -> Optional[Any]:
    """The torch.device a rank's tensors live on: a GPU for nccl (rank modulo
    the visible GPUs, made current so NCCL's streams use it), else None (the
    CPU). Raises BackendError when nccl has no GPU to use."""
    if name != "nccl":
        return None
    import torch

    count = torch.cuda.device_count()
    if count < 1:
        raise BackendError("nccl needs a CUDA device and torch sees none")
    torch.cuda.set_device(rank % count)
    return torch.device("cuda", rank % count)
