"""collgrad_torch: check gradients through PyTorch's distributed code.

Two uses, one package (torch and the standard library only):

- Your own code: ``collgrad_torch.check(fn, world=4, inputs=make_inputs)``
  runs fn on W processes and compares every rank's gradients with finite
  differences of the global loss (``usercode/``; ``python -m collgrad_torch
  check`` from a shell).
- The C tool's cases with real PyTorch: the C tool exports a case's IR
  (schema ``collgrad-check/ir/1``) and launches ``python -m
  collgrad_torch.rank`` per rank, which interprets it with one of
  PyTorch's distributed APIs (``api_*.py``) and writes JSON lines.

The check's names are loaded on first use, so ``collgrad_torch.rank`` can
still report a missing torch itself.
"""

from typing import TYPE_CHECKING, Any

from .exit_class import ExitClass

if TYPE_CHECKING:  # what the names loaded on first use are, for mypy and editors
    from .usercode import (CheckError as CheckError, GradientMismatch as GradientMismatch, Result as Result,
                           Shrunk as Shrunk, TensorCheck as TensorCheck, assert_gradients as assert_gradients,
                           check as check, replicated as replicated, shrink as shrink, warm_worlds as warm_worlds)

__all__ = ["check", "assert_gradients", "replicated", "Result", "TensorCheck", "CheckError",
           "GradientMismatch", "warm_worlds", "shrink", "Shrunk", "ExitClass"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("collgrad_torch.usercode"), name)
    raise AttributeError(f"module 'collgrad_torch' has no attribute '{name}'")
