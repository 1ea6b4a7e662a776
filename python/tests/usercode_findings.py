"""Issue 60's findings about the user-code check, each a test that fails
without its fix; run under torch 1.13 (python_usercode_findings) and torch
2.x (python_usercode_findings_torch2)."""

import os
import tempfile
import unittest

import collgrad_torch as cg

HERE = os.path.dirname(os.path.abspath(__file__))
RAISE = os.path.join(HERE, "usercode_raise.py")
BAD = os.path.join(HERE, "usercode_bad.py")
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
