"""A vocabulary-parallel output layer with loss_parallel (issue 51, torch >= 2.6), as
torchtitan writes its LM head: parallelize_module(head, mesh, ColwiseParallel(
output_layouts=Shard(-1), use_local_output=False)) leaves the logits sharded over the
vocabulary, and F.cross_entropy inside `with loss_parallel():` computes the loss without
gathering them. The loss is a Replicate DTensor: one logical loss that every rank holds,
so the check reads it under replicated semantics (DTensor's contract), and the truth is
d(cross entropy)/d theta of one nn.Linear with the full vocabulary, cut into each
rank's rows (head.weight and head.bias Shard(0); python/tests/usercode_parallel.py).

- step: correct (backward inside the context, as loss_parallel requires).
- step_scaled: the loss divided by the world before backward, as if each rank held an
  addend of it (a Replicate loss treated as Partial): "x 1/W".
"""

import torch
import torch.nn.functional as F

D, VOCAB, TOKENS = 4, 8, 6  # VOCAB divisible by W = 2 and 4


def head() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(D, VOCAB).double()


def data() -> torch.Tensor:
    return torch.randn(TOKENS, D, dtype=torch.float64, generator=torch.Generator().manual_seed(6))


def labels() -> torch.Tensor:
    return torch.tensor([1, 7, 0, 4, 4, 6])


def make_inputs(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module

    mesh = init_device_mesh("cpu", (world,))
    model = parallelize_module(head(), mesh, ColwiseParallel(output_layouts=Shard(-1), use_local_output=False))
    return {"model": model, "x": data(), "y": labels()}


def step(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor.parallel import loss_parallel

    with loss_parallel():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
    return loss


def step_scaled(rank: int, world: int, model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor.parallel import loss_parallel

    with loss_parallel():
        loss = F.cross_entropy(model(x), y)
        (loss / world).backward()
    return loss
