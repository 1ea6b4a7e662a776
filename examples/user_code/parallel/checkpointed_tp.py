"""Activation checkpointing around a tensor-parallel block (issue 51, torch >= 2.6): the
MLP of tp_mlp.py (ColwiseParallel up, RowwiseParallel down on a 1-D mesh) run under
torch.utils.checkpoint, so its activations are recomputed in backward, collectives and
all. Every rank computes the same loss from the same input: replicated semantics, and the
truth is tp_mlp's (one nn.Module with the full weights).

- checkpointed: checkpoint(block, x, use_reentrant=False): correct.
- checkpointed_reentrant: use_reentrant=True where the block's input does not require
  grad (the first block of a model, fed data): the reentrant checkpoint's output then
  requires no grad and the parameters inside get none (torch warns "None of the inputs
  have requires_grad=True"): "x 0" on every parameter.
"""

import torch
import torch.utils.checkpoint

from tp_mlp import data, make_inputs  # noqa: F401 (the check imports make_inputs from here)


def checkpointed(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    y = torch.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
    return (y ** 2).sum()


def checkpointed_reentrant(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    y = torch.utils.checkpoint.checkpoint(model, x, use_reentrant=True)
    return (y ** 2).sum()
