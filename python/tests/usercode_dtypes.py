"""Issue 61's findings about what the check does to the model's dtypes, each
a test that fails without its fix; run under torch 1.13
(python_usercode_dtypes) and torch 2.x (python_usercode_dtypes_torch2)."""

import os
import sys
import unittest

import collgrad_torch as cg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
COMPLEX = os.path.join(HERE, "usercode_complex.py")


class ComplexBuffersStayComplex(unittest.TestCase):
    """Item 2: Module.to(float64) keeps only a complex buffer's real part
    (torchtitan's RoPE cache): the check must check the model the user
    built, its complex buffer complex128, and say so."""

    def test_the_model_as_built(self) -> None:
        import usercode_complex as m

        for world in (2, 4):
            want = m.reference(world)
            other = m.reference(world, keep_imaginary=False)
            # the test can fail: the real-part model's gradients are far from the built model's
            self.assertGreater(max(abs(a - b) for r in range(world) for a, b in zip(want[r], other[r])), 0.1)
            r = cg.check(f"{COMPLEX}:rotate_all_reduce", world=world, inputs=f"{COMPLEX}:make_inputs",
                         fd="element")
            self.assertEqual(r.status, "pass", r.table())
            checks = {c.rank: c for c in r.checks if c.tensor == "model.w"}
            self.assertEqual(sorted(checks), list(range(world)))
            for rank, c in checks.items():
                for got, truth, ref in zip(c.observed, c.truth, want[rank]):
                    self.assertAlmostEqual(got, ref, delta=1e-9 * (1 + abs(ref)))
                    self.assertAlmostEqual(truth, ref, delta=1e-6 * (1 + abs(ref)))
            self.assertTrue(any("model.freqs: a complex64 buffer, run as complex128" in n for n in r.notes),
                            r.notes)

    def test_a_complex_parameter_that_requires_grad_is_refused_by_name(self) -> None:
        r = cg.check(f"{COMPLEX}:rotate_all_reduce", world=2, inputs=f"{COMPLEX}:make_inputs_complex_param")
        self.assertEqual(r.error_class, 2, r.table())
        self.assertIn("model.c is a complex64 parameter that requires grad", r.error or "")


if __name__ == "__main__":
    unittest.main()
