"""Shrinking a failing check (issue 36 item 5): the reduced check still fails
with the same pattern, is as small as the function allows, and its
reproduction script runs on its own. Truths from the math in each example's
docstring."""

import os
import subprocess
import sys
import tempfile
import unittest

import collgrad_torch as cg

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "user_code")


WARM = cg.warm_worlds()  # one start per world size for every shrink here


def setUpModule() -> None:
    WARM.__enter__()


def tearDownModule() -> None:
    WARM.__exit__(None, None, None)


def ref(module: str, name: str) -> str:
    return os.path.join(EXAMPLES, module + ".py") + ":" + name


class Shrink(unittest.TestCase):
    def test_wrong_autograd_function_shrinks_to_a_small_reproduction(self) -> None:
        s = cg.shrink(ref("custom_function", "wrong_cube"), world=4, inputs=ref("custom_function", "make_inputs"))
        self.assertEqual(s.original.status, "fail")
        self.assertEqual(s.pattern, "unknown")  # the backward's 3x against 3x^2 has no known shape
        r = s.result
        self.assertEqual(r.status, "fail", r.table())
        self.assertLessEqual(r.world, 2)
        for ins in r.rank_inputs:
            for d in ins.values():
                n = 1
                for k in d["shape"]:
                    n *= k
                self.assertLessEqual(n, 4, d)
        self.assertIn("no known pattern", r.checks[0].patterns[0])
        # W=1, x = [0.5]: L = x^3, the truth 3 x^2 = 0.75; the wrong backward gives 3 x = 1.5
        if r.world == 1 and r.rank_inputs[0]["x"]["values"] == [0.5]:
            self.assertAlmostEqual(r.checks[0].observed[0], 1.5, places=12)
            self.assertAlmostEqual(r.checks[0].truth[0], 0.75, places=6)
        self.assertIn("shrunk: W=4, x[3] (3 elements)  ->  W=", s.summary())
        self.assertIn("of a 60 s budget", s.summary())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "repro.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(s.script)
            env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
            out = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("no known pattern", out.stdout)
        self.assertIn(f"at W={r.world} ", out.stdout)

    def test_the_reproduction_runs_from_anywhere_with_the_checks_options(self) -> None:
        # issue 63 item 6: the script held a relative path and said `python`; issue 61: it dropped cpu_for_cuda
        rel = os.path.relpath(os.path.join(EXAMPLES, "custom_function.py"))
        s = cg.shrink(rel + ":wrong_cube", world=2, inputs=rel + ":make_inputs", cpu_for_cuda=True, budget=30)
        self.assertEqual(s.original.status, "fail")
        self.assertIn(repr(os.path.abspath(rel) + ":wrong_cube"), s.script)
        self.assertIn("cpu_for_cuda=True", s.script)
        self.assertIn(f"Run: {sys.executable} THIS_FILE.py", s.script)
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "repro.py"), "w", encoding="utf-8") as f:
                f.write(s.script)
            env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
            out = subprocess.run([sys.executable, "repro.py"], cwd=tmp, capture_output=True, text=True,
                                 timeout=300, env=env)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("no known pattern", out.stdout)

    def test_a_pattern_that_needs_two_ranks_keeps_them(self) -> None:
        # the doubled expert gradient is x W: at W=1 it would be right, so the shrink stops at 2
        s = cg.shrink(ref("moe", "moe_expert_grad_doubled"), world=4, inputs=ref("moe", "make_inputs"))
        self.assertEqual(s.pattern, "times_world")
        self.assertEqual(s.result.world, 2, s.summary())
        self.assertEqual(s.result.status, "fail")
        self.assertIn("world 4 -> 2", s.steps)

    def test_the_budget_bounds_it_and_says_so(self) -> None:
        s = cg.shrink(ref("custom_function", "wrong_cube"), world=2, inputs=ref("custom_function", "make_inputs"),
                      budget=0.0)
        self.assertTrue(s.out_of_time)
        self.assertEqual(s.result.world, 2)
        self.assertIn("the 0 s budget ran out", s.summary())

    def test_a_passing_check_is_not_shrunk(self) -> None:
        s = cg.shrink(ref("seed_allreduce", "sum_nn"), world=2, inputs=ref("seed_allreduce", "make_inputs"))
        self.assertEqual((s.original.status, s.tried, s.script), ("pass", 0, ""))


if __name__ == "__main__":
    unittest.main()
