"""A function whose compiled forward differs from its eager one, for
usercode_torch2.py's check that a disagreeing compile mode is named."""

import torch


def make_inputs(rank: int, world: int) -> dict:
    return {"x": (torch.arange(3, dtype=torch.float64) + 1 + rank).requires_grad_()}


def compile_doubles(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    """Local only: torch.distributed.nn refuses compilation, and the frame would run eagerly."""
    scale = 2.0 if torch.compiler.is_compiling() else 1.0
    return (scale * x * x).sum()
