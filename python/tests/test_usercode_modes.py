"""collgrad_torch.check's fast mode (random directional derivatives beyond the
element budget, gradcheck's fast mode): right code passes, a x W bug is named,
the seed picks the directions, and auto switches at the budget."""

import os
import unittest

import collgrad_torch as cg
from collgrad_core import patterns

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "examples", "user_code")
SIZED = os.path.join(EXAMPLES, "sized.py")
TP = os.path.join(EXAMPLES, "megatron_tp.py")


class FastMode(unittest.TestCase):
    def test_right_code_passes_one_direction_per_tensor(self) -> None:
        r = cg.check(f"{SIZED}:gather_matmul", world=2, inputs=f"{SIZED}:make_inputs", fd="fast", seed=3)
        self.assertEqual((r.status, r.fd), ("pass", "fast"), r.table())
        self.assertEqual([c.numel for c in r.checks], [1, 1])
        self.assertIn("directional derivative along a random unit vector (seed 3)", r.checks[0].note)

    def test_auto_switches_beyond_the_budget(self) -> None:
        r = cg.check(f"{SIZED}:gather_matmul", world=2, inputs=f"{SIZED}:make_inputs", fd_budget=100)
        self.assertEqual(r.fd, "fast")  # 128 elements in all > 100
        r = cg.check(f"{SIZED}:gather_matmul", world=2, inputs=f"{SIZED}:make_inputs", fd_budget=128)
        self.assertEqual(r.fd, "element")

    def test_seed_picks_the_direction(self) -> None:
        a = cg.check(f"{SIZED}:gather_matmul", world=2, inputs=f"{SIZED}:make_inputs", fd="fast", seed=1)
        b = cg.check(f"{SIZED}:gather_matmul", world=2, inputs=f"{SIZED}:make_inputs", fd="fast", seed=2)
        self.assertNotAlmostEqual(a.checks[0].observed[0], b.checks[0].observed[0], places=6)

    def test_times_world_named_in_fast_mode(self) -> None:
        r = cg.check(f"{TP}:sp_mlp_double_reduce", world=2, inputs=f"{TP}:make_sp_inputs", fd="fast")
        self.assertEqual(r.status, "fail", r.table())
        bad = [c for c in r.checks if not c.ok]
        self.assertEqual({c.tensor for c in bad}, {"x"})
        for c in bad:
            self.assertIn(patterns.TIMES_W, c.patterns)
            self.assertAlmostEqual(c.observed[0] / c.truth[0], 2.0, places=5)


if __name__ == "__main__":
    unittest.main()


class ThirdPartyBackend(unittest.TestCase):
    """backend="FILE.py:NAME" imports the file, which registers the process group
    (tests/torch/drop_rank_backend.py: gloo, but rank 1's all_reduce input counts
    as zeros). sum_nn at W=2 through it: S = 2 x_0 on both ranks, so the truth
    is d(2 S^2)/d x_0 = 16 and d/d x_1 = 0; the backward's all_reduce drops rank
    1's gradient too, giving 2 * (2 S) = 8 and 3 * (2 S) = 12."""

    def test_wrong_all_reduce_is_caught(self) -> None:
        root = os.path.dirname(os.path.dirname(EXAMPLES))
        backend = os.path.join(root, "tests", "torch", "drop_rank_backend.py") + ":droprank"
        path = os.path.join(EXAMPLES, "seed_allreduce.py")
        r = cg.check(f"{path}:sum_nn", world=2, inputs=f"{path}:make_inputs", backend=backend)
        self.assertEqual((r.status, r.backend), ("fail", "droprank"), r.table())
        got = [(round(c.observed[0], 6), round(c.truth[0], 4)) for c in r.checks]
        self.assertEqual(got, [(8.0, 16.0), (12.0, 0.0)], r.table())
