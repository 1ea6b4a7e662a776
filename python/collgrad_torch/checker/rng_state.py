"""The random state every evaluation of the user's code starts from.

The check seeds each rank (seed * 7919 + rank) once, before make_inputs, so
inputs drawn there are reproducible; whatever make_inputs then does to the
generators is the user's to decide: Megatron-style code seeds every
tensor-parallel rank alike there, so that dropout after the row-parallel
reduce draws one mask on every rank. The state make_inputs leaves (torch's
CPU generator and each CUDA device's once CUDA is up, Python's random,
NumPy's global RandomState where NumPy is loaded) is captured once and
restored before the analytic pass and before every finite-difference point,
so every evaluation draws the same numbers. Randomness drawn from anything
else (a torch.Generator of the user's own, a clock) cannot be replayed: the
judge names a loss that moves between two evaluations at one point as such.
"""

import random
import sys
from typing import Any, List, Optional


def seed(seed: int, rank: int) -> None:
    """Before make_inputs: every rank its own, reproducible stream."""
    import torch

    random.seed(seed * 7919 + rank)
    torch.manual_seed(seed * 7919 + rank)


class RngState:
    """The generators' state at one moment, to be restored again and again."""

    def __init__(self) -> None:
        import torch

        self.cpu = torch.get_rng_state()
        self.cuda: Optional[List[Any]] = (torch.cuda.get_rng_state_all()
                                          if torch.cuda.is_available() and torch.cuda.is_initialized() else None)
        self.python = random.getstate()
        numpy = sys.modules.get("numpy")
        self.numpy = numpy.random.get_state() if numpy is not None else None

    def restore(self) -> None:
        import torch

        torch.set_rng_state(self.cpu)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)
        random.setstate(self.python)
        numpy = sys.modules.get("numpy")
        if self.numpy is not None and numpy is not None:
            numpy.random.set_state(self.numpy)
