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
import sys
from typing import Tuple


class BackendError(Exception):
    """The backend could not be found or imported."""


def resolve(spec: str) -> str:
    """The backend name to initialise, after importing what `spec` names."""
    if ":" not in spec:
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
    return name


def init(spec: str, store_path: str, rank: int, world: int, timeout_s: float) -> Tuple[object, str]:
    """Join the default process group; returns (store, backend name)."""
    import torch.distributed as dist

    name = resolve(spec)
    store = dist.FileStore(store_path, world)
    dist.init_process_group(name, store=store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout_s))
    return store, name
