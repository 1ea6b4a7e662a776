#!/usr/bin/env python3
"""What torch.distributed.nn.functional does on a subgroup, measured.

    probe_subgroups.py [SCENARIO ...]

Runs each scenario as W = 3 gloo processes on 127.0.0.1 (run it inside
`unshare -n` with lo up when root), group [1, 2] made by every rank as
new_group requires, every rank calling the collective (rank 0 is no member,
as in cases/subgroups). Prints one line per scenario and rank:

    torch VERSION SCENARIO rank R: grad [..]            (forward and backward ran)
    torch VERSION SCENARIO rank R: raises at forward: MESSAGE
    torch VERSION SCENARIO rank R: raises at backward: MESSAGE
    torch VERSION SCENARIO rank R: hangs (gloo timed out at forward|backward)
    torch VERSION SCENARIO rank R: hangs                (no answer in 30 s)

The scenarios are the programs of cases/subgroups, with the same inputs and
losses, so the numbers can be set beside the oracle's by hand. The lines are
what tests/torch/findings-subgroups.txt records. Standard library and torch
only.
"""

import datetime
import multiprocessing as mp
import os
import socket
import sys
import time
from typing import Callable, Dict, List

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as F

WORLD = 3
MEMBERS = [1, 2]


def _loss_weight(rank: int) -> float:
    return float(rank + 1)


def broadcast_src(src: int) -> Callable[[int, object], torch.Tensor]:
    """b = broadcast(x, src, group=g), x = full(rank + 1, 2)."""

    def run(rank: int, g: object) -> torch.Tensor:
        x = torch.full((2,), float(rank + 1), requires_grad=True)
        b = F.broadcast(x, src, group=g)
        (b.sum() * _loss_weight(rank)).backward()
        return x.grad

    return run


def all_gather(rank: int, g: object) -> torch.Tensor:
    x = torch.full((2,), float(rank), requires_grad=True)
    y = torch.cat(F.all_gather(x, group=g))
    (y.sum() * _loss_weight(rank)).backward()
    return x.grad


def all_reduce_sum(rank: int, g: object) -> torch.Tensor:
    x = torch.full((2,), float(rank + 1), requires_grad=True)
    y = F.all_reduce(x, group=g)
    (y.sum() * _loss_weight(rank)).backward()
    return x.grad


def all_to_all(rank: int, g: object) -> torch.Tensor:
    x = torch.full((2,), float(rank), requires_grad=True)
    outs = [torch.empty(1) for _ in MEMBERS]
    ys = F.all_to_all(outs, list(x.chunk(2)), group=g)
    (torch.cat(ys).sum() * _loss_weight(rank)).backward()
    return x.grad


def all_to_all_single(rank: int, g: object) -> torch.Tensor:
    """all_to_all with splits, as cases/subgroups/moe_uneven_all_to_all.case
    writes it: group rank 0 sends [1, 2] rows, group rank 1 [2, 1]."""
    x = torch.tensor([10.0 * rank, 10.0 * rank + 1, 10.0 * rank + 2], requires_grad=True)
    splits = [1, 2] if rank == 1 else [2, 1]
    if rank not in MEMBERS:
        splits = [3, 0]
    out = torch.empty(3)
    y = F.all_to_all_single(out, x, output_split_sizes=splits, input_split_sizes=splits, group=g)
    (y * torch.arange(1.0, 4.0)).sum().backward()
    return x.grad


def gather_dst(dst: int) -> Callable[[int, object], torch.Tensor]:
    def run(rank: int, g: object) -> torch.Tensor:
        x = torch.full((2,), float(rank), requires_grad=True)
        ys = F.gather(x, dst, group=g)
        (torch.cat(ys).sum() * _loss_weight(rank)).backward()
        return x.grad

    return run


def scatter_src(src: int) -> Callable[[int, object], torch.Tensor]:
    def run(rank: int, g: object) -> torch.Tensor:
        x = torch.full((4,), float(rank), requires_grad=True)
        y = F.scatter(list(x.chunk(2)), src, group=g)
        (y.sum() * _loss_weight(rank)).backward()
        return x.grad

    return run


def gather_dst0_on_02(rank: int, g: object) -> torch.Tensor:
    """Issue 39 item 1, on the group [0, 2] (G02): x_r = [1, 2] + 10 r; the members gather
    to global rank 0 (its group rank is 0 too), L_r = (r + 1) sum(y^2) with y the gathered
    rows (zeros off the root); rank 1 (no member) calls nothing, L_1 = 2 sum(x^2). Truth:
    rank 0 [2, 4], rank 1 [44, 48], rank 2 [42, 44]."""
    x = (torch.tensor([1.0, 2.0]) + 10 * rank).requires_grad_()
    if rank in G02:
        ys = F.gather(x, 0, group=g)
        loss = torch.cat(ys).pow(2).sum() * _loss_weight(rank) + 0 * x.sum()
    else:
        loss = x.pow(2).sum() * _loss_weight(rank)
    loss.backward()
    return x.grad


def scatter_src0_on_02(rank: int, g: object) -> torch.Tensor:
    """On G02: x_r = [1, 2, 3, 4] + 10 r; global rank 0 scatters its chunks [1, 2] (to
    itself) and [3, 4] (to rank 2), L_r = (r + 1) sum(y^2); rank 1 calls nothing,
    L_1 = 2 sum(x^2). Truth: rank 0 [2, 4, 18, 24], rank 1 [44, 48, 52, 56], rank 2 0."""
    x = (torch.tensor([1.0, 2.0, 3.0, 4.0]) + 10 * rank).requires_grad_()
    if rank in G02:
        y = F.scatter(list(x.chunk(2)), 0, group=g)
        loss = y.pow(2).sum() * _loss_weight(rank) + 0 * x.sum()
    else:
        loss = x.pow(2).sum() * _loss_weight(rank)
    loss.backward()
    return x.grad


G02 = [0, 2]

SCENARIOS: Dict[str, Callable[[int, object], torch.Tensor]] = {
    "broadcast_src2": broadcast_src(2),
    "broadcast_src1": broadcast_src(1),
    "all_reduce_sum": all_reduce_sum,
    "all_gather": all_gather,
    "all_to_all": all_to_all,
    "all_to_all_single": all_to_all_single,
    "gather_dst2": gather_dst(2),
    "scatter_src2": scatter_src(2),
    "gather_dst0_on_02": gather_dst0_on_02,
    "scatter_src0_on_02": scatter_src0_on_02,
}
# the scenarios on G02 instead of MEMBERS (every rank makes both groups, as new_group requires)
ON_02 = {"gather_dst0_on_02", "scatter_src0_on_02"}


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def _rank_main(name: str, rank: int, port: int, out: "mp.Queue[str]") -> None:
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=datetime.timedelta(seconds=8))
    g = dist.new_group(MEMBERS)
    g02 = dist.new_group(G02)
    if name in ON_02:
        g = g02
    if os.environ.get("PROBE_TRACE"):
        import faulthandler

        faulthandler.dump_traceback_later(15, exit=True)
    run = SCENARIOS[name]
    try:
        # The scenario raises in forward or in backward; tell them apart by
        # whether autograd's engine is on the stack of the exception.
        grad = run(rank, g)
        out.put(f"rank {rank}: grad {[round(v, 6) for v in grad.tolist()]}")
    except Exception as e:  # noqa: BLE001 -- every refusal is an outcome
        import traceback

        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        stage = "backward" if ".backward()" in tb or "run_backward" in tb else "forward"
        what = _first_line(e)
        if "timed out" in what.lower() or "timeout" in what.lower():
            out.put(f"rank {rank}: hangs (gloo timed out at {stage})")
        else:
            out.put(f"rank {rank}: raises at {stage}: {what}")
    # A failed collective leaves gloo threads waiting: leave without joining
    # them, once the queue's feeder thread has handed the line over.
    out.close()
    out.join_thread()
    os._exit(0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def probe(name: str) -> List[str]:
    ctx = mp.get_context("spawn")
    out: "mp.Queue[str]" = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_rank_main, args=(name, r, port, out)) for r in range(WORLD)]
    for p in procs:
        p.start()
    lines = []
    deadline = time.monotonic() + 30
    for _ in procs:
        try:
            lines.append(out.get(timeout=max(0.1, deadline - time.monotonic())))
        except Exception:  # noqa: BLE001 -- queue.Empty: a rank never answered
            break
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
    seen = {int(line.split()[1].rstrip(":")) for line in lines}
    lines += [f"rank {r}: hangs" for r in range(WORLD) if r not in seen]
    return sorted(lines)


def main(argv: List[str]) -> int:
    names = argv or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario {unknown[0]}; expected one of {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    version = torch.__version__.split("+")[0]
    for name in names:
        for line in probe(name):
            print(f"torch {version} {name} {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
