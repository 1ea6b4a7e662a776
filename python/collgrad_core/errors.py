"""What check() raises, for the PyTorch check and the JAX check alike (no torch here)."""

from collgrad_core.result import Result


class CheckError(Exception):
    """Bad usage, found before any process starts (exit 2)."""


class GradientMismatch(AssertionError):
    """assert_gradients found a wrong gradient, or could not check; the
    message is the result's table, and .result holds the numbers."""

    def __init__(self, result: Result):
        super().__init__(result.table())
        self.result = result
