"""collgrad_torch: check gradients through PyTorch's distributed code.

Two uses, one package (torch and the standard library only):

- Your own code: ``collgrad_torch.check(fn, world=4, inputs=make_inputs)``
  runs fn on W processes and compares every rank's gradients with finite
  differences of the global loss (``checker/``; ``python -m collgrad_torch
  check`` from a shell; the pytest plugin).
- The C tool's cases with real PyTorch: the C tool exports a case's IR
  (schema ``collgrad-check/ir/1``) and launches ``python -m
  collgrad_torch.runner.rank`` per rank, which interprets it with one of
  PyTorch's distributed APIs (``runner/api_*.py``) and writes JSON lines.

Shared by both: the exit class and the process-group backends. The check's
names are loaded on first use, so the runner can still report a missing
torch itself. The module names of 0.1 (``collgrad_torch.usercode``,
``collgrad_torch.rank``, ...) still import, with a DeprecationWarning
(``_renamed.py``).
"""

from typing import TYPE_CHECKING, Any

from . import _renamed
from collgrad_core.exit_class import ExitClass

if TYPE_CHECKING:  # what the names loaded on first use are, for mypy and editors
    from .checker import (CheckError as CheckError, GradientMismatch as GradientMismatch, Result as Result,
                           Shrunk as Shrunk, TensorCheck as TensorCheck, assert_gradients as assert_gradients,
                           check as check, replicated as replicated, shrink as shrink, warm_worlds as warm_worlds)

__all__ = ["check", "assert_gradients", "replicated", "Result", "TensorCheck", "CheckError",
           "GradientMismatch", "warm_worlds", "shrink", "Shrunk", "ExitClass"]


_renamed.install()


def __getattr__(name: str) -> Any:
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("collgrad_torch.checker"), name)
    raise AttributeError(f"module 'collgrad_torch' has no attribute '{name}'")
