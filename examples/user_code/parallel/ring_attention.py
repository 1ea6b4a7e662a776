"""Ring attention for context parallelism, written by hand over send/recv (issue 51, torch
1.13 and 2.x): the sequence is split over the ranks (rank r holds rows r*S .. (r+1)*S - 1
of Q, K and V); each rank keeps its queries and passes the key/value block it holds to
the next rank W - 1 times, folding each block it sees into an online softmax (running
max, running denominator), so its queries attend to the whole sequence without the
whole of K and V on any rank. The pass is an autograd Function over isend/irecv whose
backward sends the block's gradient back the way it came: to the previous rank. Rank
r's loss is (out_r^2).sum(), the global loss their sum; one process with the full Q, K,
V and plain softmax attention computes the truth (python/tests/usercode_parallel.py).

- ring: correct.
- ring_grad_wrong_way: the backward sends the gradient on along the ring (to the next
  rank) instead of back: each K/V block's gradient lands on a rank that did not send it.
  At W=2 the next rank is the previous one, so the bug is invisible there and the
  gradients are right; at W=4 they are wrong (no scaling explains them).
"""

import math

import torch
import torch.distributed as dist

S, D = 2, 3  # rows per rank, head width


def full(which: str, world: int) -> torch.Tensor:
    seed = {"q": 11, "k": 12, "v": 13}[which]
    return torch.randn(S * world, D, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def make_inputs(rank: int, world: int) -> dict:
    rows = slice(rank * S, (rank + 1) * S)
    return {n: full(n, world)[rows].clone().requires_grad_() for n in ("q", "k", "v")}


def _exchange(t: torch.Tensor, to: int, frm: int) -> torch.Tensor:
    out = torch.empty_like(t)
    reqs = [dist.isend(t.contiguous(), to), dist.irecv(out, frm)]
    for req in reqs:
        req.wait()
    return out


class _RingPass(torch.autograd.Function):
    """Send to the next rank, receive from the previous; the gradient goes back."""

    @staticmethod
    def forward(ctx, t: torch.Tensor, wrong_way: bool) -> torch.Tensor:  # type: ignore[override]
        rank, world = dist.get_rank(), dist.get_world_size()
        ctx.wrong_way = wrong_way
        return _exchange(t, (rank + 1) % world, (rank - 1) % world)

    @staticmethod
    def backward(ctx, g: torch.Tensor):  # type: ignore[override]
        rank, world = dist.get_rank(), dist.get_world_size()
        if ctx.wrong_way:  # the bug: onward along the ring, as the forward went
            return _exchange(g, (rank + 1) % world, (rank - 1) % world), None
        return _exchange(g, (rank - 1) % world, (rank + 1) % world), None


def _attention(world: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, wrong_way: bool) -> torch.Tensor:
    kv = torch.stack([k, v])
    m = torch.full((q.shape[0], 1), -math.inf, dtype=q.dtype)
    denom = torch.zeros(q.shape[0], 1, dtype=q.dtype)
    acc = torch.zeros_like(q)
    for step in range(world):
        if step > 0:
            kv = _RingPass.apply(kv, wrong_way)
        s = q @ kv[0].t() / math.sqrt(D)
        m_new = torch.maximum(m, s.max(dim=1, keepdim=True).values)
        p = torch.exp(s - m_new)
        scale = torch.exp(m - m_new)
        denom = denom * scale + p.sum(dim=1, keepdim=True)
        acc = acc * scale + p @ kv[1]
        m = m_new
    return acc / denom


def ring(rank: int, world: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return (_attention(world, q, k, v, wrong_way=False) ** 2).sum()


def ring_grad_wrong_way(rank: int, world: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return (_attention(world, q, k, v, wrong_way=True) ** 2).sum()
