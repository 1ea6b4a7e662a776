"""An uneven all_to_all_single through torch.distributed.nn, with zero-sized blocks.

Rank r sends (r + 2 j) % 3 rows to rank j (so some blocks are empty: rank 0 sends none
to itself), receives what the others send it, and its loss weights what it received by
(r + 1). Right in torch 1.13: the backward is the reverse all_to_all_single.
"""

from typing import List

import torch
import torch.distributed.nn


def splits(src: int, world: int) -> List[int]:
    return [(src + 2 * j) % 3 for j in range(world)]


def make_inputs(rank: int, world: int) -> dict:
    n = sum(splits(rank, world))
    return {"x": (torch.arange(n * 2, dtype=torch.float64).reshape(n, 2) / 4 + rank).requires_grad_()}


def uneven(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    send = splits(rank, world)
    recv = [splits(j, world)[rank] for j in range(world)]
    out = torch.empty(sum(recv), 2, dtype=x.dtype, device=x.device)  # on x's GPU under nccl
    y = torch.distributed.nn.all_to_all_single(out, x, output_split_sizes=recv, input_split_sizes=send)
    return (rank + 1) * (y * y).sum()
