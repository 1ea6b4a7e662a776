"""comm.call_blocks: a reduce_scatter's blocks of a rank's rows, by the call's
explicit send_splits when it has them (the sizes worked out by hand below),
else balanced as the C side's chunk_lo."""

import unittest

import torch

from collgrad_core import ir
from collgrad_torch.runner import comm


def call(rank: int, world: int, rows: int, splits=None) -> comm.Call:
    ev = ir.PlanEvent(0, "reduce_scatter", -1, -1, [(rows,)] * world, splits)
    return comm.Call("reduce_scatter", 0, rank, world, ev)


class CallBlocksTest(unittest.TestCase):
    def test_explicit_splits_with_an_empty_block(self):
        x = torch.arange(4.0)
        splits = [[1, 0, 3]] * 3  # every rank cuts its 4 rows the same way
        parts = comm.call_blocks(call(1, 3, 4, splits), x)
        self.assertEqual([p.tolist() for p in parts], [[0.0], [], [1.0, 2.0, 3.0]])

    def test_balanced_without_splits(self):
        # 5 rows over 2 ranks: [0, 2) and [2, 5), as chunk_lo(5, 2, r) = 5r // 2
        parts = comm.call_blocks(call(0, 2, 5), torch.arange(5.0))
        self.assertEqual([p.tolist() for p in parts], [[0.0, 1.0], [2.0, 3.0, 4.0]])

    def test_blocks_are_views_that_carry_the_gradient(self):
        x = torch.arange(4.0, requires_grad=True)
        parts = comm.call_blocks(call(0, 3, 4, [[1, 0, 3]] * 3), x)
        (parts[0].sum() * 1 + parts[2].sum() * 3).backward()
        self.assertEqual(x.grad.tolist(), [1.0, 3.0, 3.0, 3.0])


if __name__ == "__main__":
    unittest.main()
