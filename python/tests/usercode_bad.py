"""Functions that are wrong in the ways issue 35 item 6 lists, for test_usercode_errors."""

import itertools
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.nn

_calls = itertools.count()


def make_inputs(rank: int, world: int) -> dict:
    return {"x": (torch.arange(3, dtype=torch.float64) + rank).requires_grad_()}


def make_two(rank: int, world: int) -> dict:
    return {"x": torch.ones(2, requires_grad=True), "y": torch.ones(2, requires_grad=True)}


def make_data_only(rank: int, world: int) -> dict:
    return {"x": torch.ones(2)}


def make_weight(rank: int, world: int) -> dict:
    return {"weight": torch.full((2,), 3.0, requires_grad=True)}  # the same on every rank


def make_replicated_unlike(rank: int, world: int) -> dict:
    import collgrad_torch as cg

    return {"w": cg.replicated(torch.full((2,), float(rank), requires_grad=True))}


def raises_on_rank_1(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    if rank == 1:
        raise ValueError("rank 1 does not like its input")
    return torch.distributed.nn.all_reduce(x).sum()


def hangs(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    if rank == 0:
        return torch.distributed.nn.all_reduce(x).sum()  # rank 1 never joins this one
    return x.sum()


def non_scalar(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return torch.distributed.nn.all_reduce(x)


def uses_x_only(rank: int, world: int, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (torch.distributed.nn.all_reduce(x) ** 2).sum()


def detached(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    s = x.detach().clone()
    dist.all_reduce(s)
    return (s * x.detach()).sum() + 0 * x.sum()


def in_place(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        x.mul_(2)
    return torch.distributed.nn.all_reduce(x).sum()


def non_deterministic(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return torch.distributed.nn.all_reduce(x).sum() * (1 + next(_calls) * 1e-3)


def nan_loss(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return torch.distributed.nn.all_reduce(x).sum() * float("nan")


def exits_on_rank_0(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    if rank == 0:
        sys.exit(3)
    return torch.distributed.nn.all_reduce(x).sum()


def dies_on_rank_1(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    if rank == 1:  # as the kernel's OOM killer would: no exception, no error file
        os.kill(os.getpid(), signal.SIGKILL)
    return torch.distributed.nn.all_reduce(x).sum()


def crashes_on_rank_1(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    if rank == 1:  # a crash in native code (an extension's, torch's)
        os.kill(os.getpid(), signal.SIGSEGV)
    return torch.distributed.nn.all_reduce(x).sum()


def quits_quietly_on_rank_1(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    if rank == 1:
        os._exit(0)
    return torch.distributed.nn.all_reduce(x).sum()


def sqrt_at_zero(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return torch.distributed.nn.all_reduce(torch.sqrt(x - rank)).sum()  # x[0] = rank: sqrt(0), nan at x - h


def integer_loss(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return torch.distributed.nn.all_reduce(x * x).sum().long()


def destroys_the_group(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    loss = torch.distributed.nn.all_reduce(x).sum()
    dist.destroy_process_group()
    return loss


def number_root(rank: int, world: int, x: torch.Tensor) -> list:
    return [torch.distributed.nn.all_reduce(x).sum(), 2.0]


def make_complex(rank: int, world: int) -> dict:
    return {"x": torch.ones(2, dtype=torch.complex128, requires_grad=True)}


def plain(rank: int, world: int, **inputs: torch.Tensor) -> torch.Tensor:
    return sum((t * t).sum() for t in inputs.values())  # type: ignore[return-value]


def slow_but_fine(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    time.sleep(0.001)
    return torch.distributed.nn.all_reduce(x).sum()


def _groups() -> int:
    import torch.distributed.distributed_c10d as c10d

    table = getattr(c10d, "_pg_group_ranks", None)
    if table is None:
        table = getattr(getattr(c10d, "_world", None), "pg_group_ranks", {})
    return len(table)


def makes_a_group(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    """Leaves a subgroup behind unless the check destroys it (test_usercode_warm)."""
    group = dist.new_group(list(range(world)))
    return torch.distributed.nn.all_reduce(x, group=group).sum()


def sees_only_its_own_groups(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    """Raises when a group of an earlier check is still there (warm worlds must
    give every check a fresh default group and nothing else)."""
    if _groups() != 1:
        raise RuntimeError(f"{_groups()} process groups exist; a fresh check has 1")
    return torch.distributed.nn.all_reduce(x).sum()
