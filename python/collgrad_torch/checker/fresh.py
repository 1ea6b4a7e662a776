"""What a warm rank does so that every check it serves runs as in a fresh process.

A cold rank imports the user's modules once, inside its one check's process
group; a warm rank serves check after check, each in a fresh group (warm.py).
Whatever the first check's import bound to its group would go stale in the
next: a `new_group` or DeviceMesh made at a module's top, and torch's own
functions whose default argument is `group=group.WORLD`, evaluated when their
module is first imported. So a warm rank

- imports those torch modules before any group exists, so their defaults hold
  "no group yet", which c10d reads as the default group, whichever is current
  (a cold rank that imports them inside its group binds that group: for its
  one check the same thing);
- after each check forgets the user's modules, the path entries, environment,
  working directory and torch's global modes the check changed, so the next
  check imports the user's code again inside its own group.

Installed code (the standard library, site-packages, torch) stays imported:
importing it again is what no cold process does either, and extension
modules cannot be imported twice.
"""

import importlib
import os
import sys
import sysconfig
from typing import Any, Dict, List, Set, Tuple

# torch modules with a default argument evaluated from group.WORLD at import,
# found by reading torch 1.13 and 2.15 for `= group.WORLD` / `= dist.group.WORLD`
# in a signature: torch.distributed.nn's collectives, ZeroRedundancyOptimizer's
# process_group, ShardedGradScaler's process_group
BINDS_WORLD_AT_IMPORT = (
    "torch.distributed.nn",
    "torch.distributed.nn.functional",
    "torch.distributed.optim.zero_redundancy_optimizer",
    "torch.distributed.fsdp.sharded_grad_scaler",
)


def import_group_defaults() -> List[str]:
    """Import BINDS_WORLD_AT_IMPORT before the first group exists; what cannot
    be imported (an older torch, a build without distributed) is returned,
    never an error: a cold rank would not have it either."""
    missing = []
    for name in BINDS_WORLD_AT_IMPORT:
        try:
            importlib.import_module(name)
        except Exception:  # ImportError, or a module that fails on this build
            missing.append(name)
    return missing


def _installed_roots() -> Tuple[str, ...]:
    roots: Set[str] = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.realpath(path))
    for p in sys.path:
        if os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages"):
            roots.add(os.path.realpath(p))
    return tuple(r + os.sep for r in sorted(roots))


def _is_user_module(module: Any, installed: Tuple[str, ...]) -> bool:
    name = getattr(module, "__name__", "") or ""
    if name.startswith("collgrad_user_"):  # a FILE.py:NAME reference's module (refs.py)
        return True
    if name == "collgrad_torch" or name.startswith("collgrad_torch."):
        return False
    path = getattr(module, "__file__", None)
    if not path:  # built-in, frozen or namespace: not the user's source
        return False
    return not os.path.realpath(path).startswith(installed)


class Fresh:
    """The process's state before a check; restore() returns to it."""

    def __init__(self) -> None:
        import torch

        self.modules = set(sys.modules)
        self.path = list(sys.path)
        self.environ: Dict[str, str] = dict(os.environ)
        self.cwd = os.getcwd()
        self.dtype = torch.get_default_dtype()
        self.grad = torch.is_grad_enabled()
        self.deterministic = torch.are_deterministic_algorithms_enabled()

    def restore(self) -> List[str]:
        """Back to the state at construction; the user modules forgotten, by name."""
        import torch

        installed = _installed_roots()
        forgotten = sorted(n for n in set(sys.modules) - self.modules
                           if _is_user_module(sys.modules.get(n), installed))
        for name in forgotten:
            del sys.modules[name]
        importlib.invalidate_caches()  # a file the next check's code is in may be new
        sys.path[:] = self.path
        if dict(os.environ) != self.environ:
            os.environ.clear()
            os.environ.update(self.environ)
        if os.getcwd() != self.cwd:
            os.chdir(self.cwd)
        torch.set_default_dtype(self.dtype)
        torch.set_grad_enabled(self.grad)
        torch.use_deterministic_algorithms(self.deterministic)
        return forgotten
