"""A tensor-parallel transformer block at scale (issue 51 item 6, torch >= 2.6): hidden size
1024, 8 heads, an MLP of 4096, about 12.6M parameters across the ranks, made with
parallelize_module as torchtitan plans a block: attention's q, k, v ColwiseParallel (each
rank its heads) and o RowwiseParallel, the MLP's up ColwiseParallel and down
RowwiseParallel; the two LayerNorms stay plain tensors, a copy on every rank (declared
replicated to the check). Every rank computes the same loss from the same tokens:
replicated semantics. Checked with fd="fast" (one random direction per tensor):
scripts/usercode-tp-block.sh prints the time.

- block: correct (fn: the check runs backward).
- block_bias_twice: a step (check(step=...)) that all-reduces mlp.down.bias's gradient
  after its backward, a Replicate bias whose gradient the plan already made whole: "x W"
  on that parameter alone.
"""

import torch
import torch.distributed as dist

HIDDEN, HEADS, FFN, TOKENS = 1024, 8, 4096, 4


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v, self.o = (torch.nn.Linear(HIDDEN, HIDDEN) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        head = HIDDEN // HEADS
        # local heads: ColwiseParallel leaves each rank HIDDEN / W of q, k, v's features
        q, k, v = (p(x).view(x.shape[0], -1, head).transpose(0, 1) for p in (self.q, self.k, self.v))
        a = torch.softmax(q @ k.transpose(1, 2) / head ** 0.5, dim=-1) @ v
        return self.o(a.transpose(0, 1).reshape(x.shape[0], -1))


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up, self.down = torch.nn.Linear(HIDDEN, FFN), torch.nn.Linear(FFN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.gelu(self.up(x)))


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1, self.attn = torch.nn.LayerNorm(HIDDEN), Attention()
        self.norm2, self.mlp = torch.nn.LayerNorm(HIDDEN), Mlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def make_inputs(rank: int, world: int) -> dict:
    import collgrad_torch as cg
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    torch.manual_seed(0)  # the same logical weights on every rank
    block = Block().double()
    plan = {"attn.q": ColwiseParallel(), "attn.k": ColwiseParallel(), "attn.v": ColwiseParallel(),
            "attn.o": RowwiseParallel(), "mlp.up": ColwiseParallel(), "mlp.down": RowwiseParallel()}
    parallelize_module(block, init_device_mesh("cpu", (world,)), plan)
    x = torch.randn(TOKENS, HIDDEN, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    return {"block": cg.replicated(block), "x": x}  # the norms' copies; DTensors by their placements


def block(rank: int, world: int, block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return (block(x) ** 2).sum()


def block_bias_twice(rank: int, world: int, block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    loss = (block(x) ** 2).sum()
    loss.backward()
    dist.all_reduce(block.mlp.down.bias.grad.to_local())  # type: ignore[union-attr]
    return loss
