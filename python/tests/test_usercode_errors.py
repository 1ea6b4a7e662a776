"""Bad input to collgrad_torch.check (issue 35 item 6): each gets a clear
error with its class, nothing hangs past the timeout, nothing crashes."""

import os
import re
import time
import unittest

import collgrad_torch as cg
from collgrad_core import patterns

BAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "usercode_bad.py")


def run(fn: str, inputs: str = "make_inputs", **kw: object) -> cg.Result:
    kw.setdefault("world", 2)
    return cg.check(f"{BAD}:{fn}", inputs=f"{BAD}:{inputs}", **kw)  # type: ignore[arg-type]


class Errors(unittest.TestCase):
    def test_raises_on_one_rank(self) -> None:
        r = run("raises_on_rank_1")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("rank 1 failed during analytic pass", r.error or "")
        self.assertIn("ValueError: rank 1 does not like its input", r.error or "")
        self.assertIn("usercode_bad.py", r.error or "")  # the traceback reaches the user's line

    def test_hang_names_the_rank_and_call(self) -> None:
        t0 = time.monotonic()
        r = run("hangs", timeout=4)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual((r.status, r.error_class), ("error", 3), r.table())
        text = r.error or ""
        self.assertIn("no rank moved on for 4 s", text)
        self.assertRegex(text, r"rank 0: analytic pass .* waits in all_reduce, called from .*usercode_bad\.py:\d+ \(hangs\)")

    def test_non_scalar_loss(self) -> None:
        r = run("non_scalar")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("has shape [3]: return a scalar loss", r.error or "")

    def test_nothing_requires_grad(self) -> None:
        r = run("plain", inputs="make_data_only")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("no input requires grad on any rank", r.error or "")

    def test_no_gradient_reaches_one_input(self) -> None:
        r = run("uses_x_only", inputs="make_two")
        self.assertEqual(r.status, "pass", r.table())
        ys = [c for c in r.checks if c.tensor == "y"]
        self.assertEqual(len(ys), 2)
        for c in ys:
            self.assertIn("no gradient reached it", c.note)

    def test_no_gradient_where_the_truth_is_not_zero(self) -> None:
        r = run("detached")
        self.assertEqual(r.status, "fail", r.table())
        for c in r.checks:
            self.assertIn(patterns.ZERO, c.patterns)

    def test_changes_its_input_in_place(self) -> None:
        r = run("in_place")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("changed its input 'x' in place", r.error or "")

    def test_non_deterministic_forward(self) -> None:
        r = run("non_deterministic")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("non-deterministic forward", r.error or "")

    def test_non_finite_loss(self) -> None:
        r = run("nan_loss")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("rank 0's loss at the inputs is not finite: nan, nan, nan", r.error or "")

    def test_non_finite_finite_differences(self) -> None:
        r = run("sqrt_at_zero")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("finite differences are not finite along x[0] (rank 0's)", r.error or "")

    def test_integer_loss(self) -> None:
        # once: FAIL with a truth of 1/(2h) = 500000 from the rounding step
        r = run("integer_loss")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("fn's loss on rank 0 has dtype int64: a loss must be a real floating tensor", r.error or "")

    def test_destroys_the_process_group(self) -> None:
        # once: a bare AssertionError from inside torch at the first finite-difference point
        r = run("destroys_the_group")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("fn destroyed the default process group on rank 0 (dist.destroy_process_group)",
                      r.error or "")

    def test_a_number_among_the_roots(self) -> None:
        # once: AttributeError ('float' object has no attribute 'requires_grad')
        r = run("number_root")
        self.assertEqual(r.status, "pass", r.table())
        self.assertIn("root 1 does not require grad", r.table())

    def test_complex_input(self) -> None:
        # once: "no input requires grad", which it does
        r = run("plain", inputs="make_complex")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("input 'x' is complex128 and requires grad: the check takes real floating tensors",
                      r.error or "")

    def test_sys_exit_in_the_function(self) -> None:
        # SystemExit is no Exception: once, rank 1 waited for rank 0 until the timeout
        t0 = time.monotonic()
        r = run("exits_on_rank_0", timeout=30)
        self.assertLess(time.monotonic() - t0, 25, r.table())
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("rank 0 failed during analytic pass (fn and backward): the function called sys.exit(3)",
                      r.error or "")

    def test_a_rank_that_dies(self) -> None:
        # no error file from the dead rank: its death is named first, with how it
        # died, not only the survivor's "connection reset" (or a hang at the timeout)
        for fn, how in (("dies_on_rank_1", "killed by signal 9 (SIGKILL)"),
                        ("crashes_on_rank_1", "killed by signal 11 (SIGSEGV)"),
                        ("quits_quietly_on_rank_1", "exit status 0")):
            with self.subTest(fn=fn):
                t0 = time.monotonic()
                r = run(fn, timeout=30)
                self.assertLess(time.monotonic() - t0, 25, r.table())
                self.assertEqual((r.status, r.error_class), ("error", 3), r.table())
                first = (r.error or "").splitlines()[0]
                self.assertRegex(first, "^" + re.escape(f"rank 1's process ended during analytic pass (fn and "
                                                        f"backward) without a result or an error: {how}") + "(;|$)")
        r = run("crashes_on_rank_1", timeout=30)  # faulthandler's dump names the user's line
        self.assertRegex(r.error or "", r"usercode_bad\.py\", line \d+ in crashes_on_rank_1")

    def test_replicated_copies_that_differ(self) -> None:
        r = run("plain", inputs="make_replicated_unlike")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("replicated input 'w' holds different values on rank 0 and rank 1", r.error or "")

    def test_world_too_large_refused_before_starting(self) -> None:
        t0 = time.monotonic()
        with self.assertRaisesRegex(cg.CheckError, "world 100000 needs about"):
            run("plain", world=100000)
        self.assertLess(time.monotonic() - t0, 1.0)

    def test_usage_errors(self) -> None:
        with self.assertRaisesRegex(cg.CheckError, "not a module-level function"):
            cg.check(lambda rank, world: None, world=2)
        with self.assertRaisesRegex(cg.CheckError, "exactly one of fn"):
            cg.check(world=2)
        with self.assertRaisesRegex(cg.CheckError, "semantics must be"):
            run("plain", semantics="global")
        with self.assertRaisesRegex(cg.CheckError, "positive integer"):
            run("plain", world=0)
        # once: a negative or nan atol failed right gradients ("observed 8, truth 8"), an
        # infinite rtol passed every gradient, a huge seed overflowed inside the ranks
        for kw in ({"atol": -1.0}, {"atol": float("nan")}, {"rtol": float("inf")}, {"rtol": "0.1"}):
            with self.subTest(**kw), self.assertRaisesRegex(cg.CheckError, "must be a finite number >= 0"):
                run("plain", **kw)
        with self.assertRaisesRegex(cg.CheckError, "fd_budget must be an integer >= 0"):
            run("plain", fd_budget=-5)
        for seed in (-1, 1 << 32, 1.5):
            with self.subTest(seed=seed), self.assertRaisesRegex(cg.CheckError, r"seed must be an integer in 0\.\.4294967295"):
                run("plain", seed=seed)

    def test_names_refused_before_starting(self) -> None:
        # once: name="" fell back to the reference silently, name=5 reached the reports; a
        # replicated name "" or 5 was found by each rank's make_inputs
        for name in ("", 5):
            with self.subTest(name=name), self.assertRaisesRegex(cg.CheckError, "name must be a non-empty string"):
                run("plain", name=name)
        for rep in ([""], [5], ("weight", None)):
            with self.subTest(replicated=rep), self.assertRaisesRegex(cg.CheckError, "replicated must be True, False"):
                run("plain", inputs="make_weight", replicated=rep)
        for budget in (-1.0, float("nan"), float("inf"), True):  # 0: the check alone, nothing tried
            with self.subTest(budget=budget), self.assertRaisesRegex(cg.CheckError, "budget must be a finite number"):
                cg.shrink(f"{BAD}:plain", world=2, inputs=f"{BAD}:make_inputs", budget=budget)  # type: ignore[arg-type]

    def test_one_replicated_name_as_a_string(self) -> None:
        # once: replicated="weight" was the six names w, e, i, g, h, t ("replicated names no input")
        # one logical weight 3 held by both ranks, each loss w.w: the truth is 2 ranks x 2w = 12,
        # each rank alone computes 2w = 6 (per-rank semantics, weight not replicated: 6, a pass)
        r = run("plain", inputs="make_weight", replicated="weight")
        self.assertEqual(r.status, "fail", r.table())
        self.assertEqual([(c.tensor, [round(t, 6) for t in c.truth], c.observed) for c in r.checks],
                         [("weight", [12.0, 12.0], [6.0, 6.0])] * 2)  # the truth by finite differences

    def test_backend_nothing_registers(self) -> None:
        # once: "Invalid backend" from init_process_group, as infrastructure (3) with its traceback
        r = run("plain", backend="no_such_backend")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("unknown backend 'no_such_backend': this torch knows gloo,", r.error or "")
        r = run("plain", backend=f"{BAD}:no_such_backend")  # a file that registers nothing
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("usercode_bad.py registers no backend 'no_such_backend' (it must call "
                      "torch.distributed.Backend.register_backend('no_such_backend', ...)", r.error or "")

    def test_missing_function(self) -> None:
        r = run("no_such_function")
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn("has no 'no_such_function'", r.error or "")


if __name__ == "__main__":
    unittest.main()
