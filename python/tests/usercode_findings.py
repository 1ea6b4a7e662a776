"""Issue 60's findings about the user-code check, each a test that fails
without its fix; run under torch 1.13 (python_usercode_findings) and torch
2.x (python_usercode_findings_torch2)."""

import os
import sys
import tempfile
import unittest

import collgrad_torch as cg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
RAISE = os.path.join(HERE, "usercode_raise.py")
BAD = os.path.join(HERE, "usercode_bad.py")
SCALE = os.path.join(HERE, "usercode_fd_scale.py")
RNG = os.path.join(HERE, "usercode_rng.py")
KINDS = ["TypeError", "AttributeError", "KeyError", "IndexError", "AssertionError", "NotImplementedError",
         "RuntimeError"]


class UserErrorsAreTheCode(unittest.TestCase):
    """Item 1: whatever the user's code raises is exit 2, the code's fault;
    only a dead rank, a hang or the transport's own errors are 3."""

    def expect_code(self, r: cg.Result, kind: str) -> None:
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn(kind, r.error or "")

    def test_raised_by_fn_make_inputs_and_the_step(self) -> None:
        for kind in KINDS:
            for what in ("fn", "inputs", "step"):
                with self.subTest(kind=kind, raised_by=what):
                    target = {"fn" if what != "step" else "step": f"{RAISE}:{what}_{kind}" if what != "inputs"
                              else f"{RAISE}:square"}
                    inputs = f"{RAISE}:inputs_{kind}" if what == "inputs" else f"{RAISE}:make_inputs"
                    r = cg.check(world=1, inputs=inputs, timeout=30, **target)  # type: ignore[arg-type]
                    self.expect_code(r, kind)

    def test_on_one_rank_while_the_other_waits_in_a_collective(self) -> None:
        # rank 1 raises; rank 0's all_reduce then loses its peer (a transport error): still the code's
        r = cg.check(f"{BAD}:raises_on_rank_1", world=2, inputs=f"{BAD}:make_inputs")
        self.expect_code(r, "ValueError")

    def test_signature_mistakes(self) -> None:
        for fn, inputs in (("no_rank_world", "make_inputs"), ("square", "make_other_name"),
                           ("square", "make_one_argument")):
            with self.subTest(fn=fn, inputs=inputs):
                r = cg.check(f"{RAISE}:{fn}", world=2, inputs=f"{RAISE}:{inputs}", timeout=30)
                self.expect_code(r, "TypeError")

    def test_a_dead_rank_is_infrastructure(self) -> None:
        r = cg.check(f"{BAD}:dies_on_rank_1", world=2, inputs=f"{BAD}:make_inputs")
        self.assertEqual((r.status, r.error_class), ("error", 3), r.table())


class FiniteDifferencesKnowTheirError(unittest.TestCase):
    """Item 2: at 1M elements (a loss of about 1e7) a central difference at
    h = 1e-6 is off by about 1e-2 from rounding alone; the check must take
    its differences where their error bound is under the tolerance, and call
    a gradient wrong only beyond both."""

    def test_a_right_gradient_at_a_million_elements(self) -> None:
        import json

        import usercode_fd_scale as scale

        with tempfile.TemporaryDirectory() as tmp:
            r = cg.check(f"{SCALE}:tanh_all_reduce", world=4, inputs=f"{SCALE}:make_line", fd="fast")
            self.assertEqual(r.status, "pass", r.table())
            exact = scale.exact(4, r.seed)
            for c in r.checks:
                # the truth is within its own bound of the exact derivative, and the gradient right
                self.assertLessEqual(abs(c.truth[0] - exact[c.rank]), c.fd_bound, (c.rank, c.truth, exact))
                self.assertAlmostEqual(c.observed[0], exact[c.rank], delta=1e-9 * abs(exact[c.rank]) + 1e-9)
                self.assertGreater(c.fd_step, 1e-6)   # h = 1e-6 could not resolve it
                self.assertLess(c.fd_bound, 0.5 * (r.atol + r.rtol * abs(c.truth[0])))
            from collgrad_torch.checker import report

            path = os.path.join(tmp, "r.json")
            report.write_json(path, [r])
            with open(path, encoding="utf-8") as f:
                checks = json.load(f)["cases"][0]["checks"]
            self.assertTrue(all(ch["fd_error"]["bound"] > 0 and ch["fd_error"]["step"] > 1e-6 for ch in checks))

    def test_a_gradient_wrong_by_1e_3_relative_is_still_wrong(self) -> None:
        r = cg.check(f"{SCALE}:tanh_all_reduce_off", world=4, inputs=f"{SCALE}:make_line", fd="fast", rtol=1e-4)
        self.assertEqual(r.status, "fail", r.table())
        for c in r.checks:
            self.assertAlmostEqual(c.observed[0] / c.truth[0], 1 + 1e-3, delta=1e-4)

    def test_the_same_right_gradient_under_a_tolerance_no_step_can_meet(self) -> None:
        # rtol 1e-12: no step brings the bound under it: inconclusive, never wrong
        r = cg.check(f"{SCALE}:tanh_all_reduce", world=4, inputs=f"{SCALE}:make_line", fd="fast",
                     rtol=1e-12, atol=0.0)
        self.assertIn(r.status, ("inconclusive", "pass"), r.table())
        self.assertEqual(r.status, "inconclusive", r.table())
        self.assertTrue(r.ok)
        self.assertTrue(any("inconclusive: the finite differences cannot resolve" in c.note for c in r.checks))


class TheUsersRandomState(unittest.TestCase):
    """Item 13: every evaluation starts from the random state make_inputs
    left, not from the check's reseeding; a loss that moves between two
    evaluations at one point is named as randomness."""

    def test_ranks_seeded_alike_in_make_inputs_draw_one_mask(self) -> None:
        import usercode_rng as rng

        for world in (2, 4):
            with self.subTest(world=world):
                r = cg.check(f"{RNG}:reduce_then_dropout", world=world, inputs=f"{RNG}:make_inputs")
                self.assertEqual(r.status, "pass", r.table())
                self.assertTrue(r.replicated_defined, r.replicated_reason)   # one loss: one mask on every rank
                for c in r.checks:
                    want = rng.expected(c.rank, world)
                    self.assertEqual(len(c.observed), len(want))
                    for o, w in zip(c.observed, want):
                        self.assertAlmostEqual(o, w, delta=1e-9 * (1 + abs(w)))
                r = cg.check(f"{RNG}:reduce_then_dropout", world=world, inputs=f"{RNG}:make_inputs",
                             semantics="replicated")
                self.assertIsNone(r.error, r.table())

    def test_randomness_it_cannot_replay_is_named(self) -> None:
        r = cg.check(f"{RNG}:own_generator", world=2, inputs=f"{RNG}:make_inputs")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("randomness the check cannot replay", r.error or "")
        self.assertIn("a torch.Generator of the code's own", r.error or "")


class NothingLeftInTmp(unittest.TestCase):
    """Item 4: a check leaves nothing in TMPDIR (torch 1.13's
    torch.distributed.nn writes a file there on import, removed only at a
    clean exit, and the check ends its ranks with SIGKILL)."""

    def test_fresh_and_warm(self) -> None:
        seed = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "user_code", "seed_allreduce.py")
        old = os.environ.get("TMPDIR")
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["TMPDIR"] = tmp
            tempfile.tempdir = None  # tempfile caches its directory
            try:
                r = cg.check(f"{seed}:sum_nn", world=2, inputs=f"{seed}:make_inputs")
                self.assertEqual(r.status, "pass", r.table())
                self.assertEqual(os.listdir(tmp), [])
                with cg.warm_worlds():
                    for fn in ("sum_nn", "sum_c10d"):
                        cg.check(f"{seed}:{fn}", world=2, inputs=f"{seed}:make_inputs")
                self.assertEqual(os.listdir(tmp), [])
            finally:
                if old is None:
                    del os.environ["TMPDIR"]
                else:
                    os.environ["TMPDIR"] = old
                tempfile.tempdir = None


if __name__ == "__main__":
    unittest.main()
