"""collgrad_torch.checker: check the gradients of your own distributed PyTorch code.

    import collgrad_torch as cg
    result = cg.check(fn, world=2, inputs=make_inputs)
    print(result.table())

Each rank's .grad is compared with central finite differences of the global
loss, computed by running the same code on every rank in lockstep (DESIGN
section 14). See check() for the arguments.
"""

from .api import CheckError, GradientMismatch, assert_gradients, check
from .inputs import replicated
from .result import Result, TensorCheck
from .shrinking import Shrunk, shrink
from .warm import warm_worlds

__all__ = ["check", "assert_gradients", "replicated", "Result", "TensorCheck", "CheckError",
           "GradientMismatch", "warm_worlds", "shrink", "Shrunk"]
