"""collgrad_torch.checker: check the gradients of your own distributed PyTorch code.

    import collgrad_torch as cg
    result = cg.check(fn, world=2, inputs=make_inputs)
    print(result.table())

Each rank's .grad is compared with central finite differences of the global
loss, computed by running the same code on every rank in lockstep (design.md
section 14). See check() for the arguments.

The names below load on first use. What holds no torch (the result, patterns,
reports, the finite differences' error) is collgrad_core's, which the JAX
check (collgrad_jax) stands on as well.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import (CheckError as CheckError, GradientMismatch as GradientMismatch,
                      assert_gradients as assert_gradients, check as check)
    from .inputs import replicated as replicated
    from collgrad_core.result import Result as Result, TensorCheck as TensorCheck
    from .shrinking import Shrunk as Shrunk, shrink as shrink
    from .warm import warm_worlds as warm_worlds

__all__ = ["check", "assert_gradients", "replicated", "Result", "TensorCheck", "CheckError",
           "GradientMismatch", "warm_worlds", "shrink", "Shrunk"]

_HOME = {"check": "api", "assert_gradients": "api", "CheckError": "api", "GradientMismatch": "api",
         "replicated": "inputs", "Result": "result", "TensorCheck": "result", "Shrunk": "shrinking",
         "shrink": "shrinking", "warm_worlds": "warm"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
