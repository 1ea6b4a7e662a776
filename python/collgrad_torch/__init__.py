"""collgrad_torch: run collgrad-check cases with real PyTorch.

The C tool parses a case file, exports its IR as JSON (``collgrad-check
export-ir``, schema ``collgrad-check/ir/1``) and launches one Python process per
rank (``python -m collgrad_torch.rank``). Each rank interprets the program with
real torch ops and one of PyTorch's distributed APIs (``api_*.py``), and writes
what it produced -- values, gradients, the exception the framework raised, the
warnings it emitted, or that it hung -- as JSON lines the C tool diffs against
its oracle. The package depends on torch and the standard library only.
"""

__all__ = ["ir", "rng", "interp", "comm", "results", "rank"]
