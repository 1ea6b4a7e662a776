"""Issue 60's findings about the JAX check, each a test that fails without its fix."""

import os
import unittest

import collgrad_jax as cgj

HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = os.path.join(HERE, "jax_fd_scale.py")


class FiniteDifferencesKnowTheirError(unittest.TestCase):
    """Item 2 for JAX: at 1M elements per device a difference at h = 1e-6 is
    off by rounding alone; a right gradient passes with its bound, one wrong by
    1e-3 relative fails under a tolerance the differences can resolve, and a
    tolerance none can is inconclusive."""

    def run_check(self, fn, **kw):
        return cgj.check(f"{SCALE}:{fn}", inputs=f"{SCALE}:make_inputs", world=4, fd="fast", vma="as_written", **kw)

    def test_right_wrong_and_inconclusive(self):
        r = self.run_check("make_loss")
        self.assertEqual(r.status, "pass", r.table())
        for c in r.checks:
            self.assertGreater(c.fd_step, 1e-6, r.table())   # h = 1e-6 could not resolve it
            self.assertGreater(c.fd_bound, 0.0)
        r = self.run_check("make_loss_off", rtol=1e-4)
        self.assertEqual(r.status, "fail", r.table())
        for c in r.checks:
            self.assertAlmostEqual(c.observed[0] / c.truth[0], 1 + 1e-3, delta=1e-4)
        r = self.run_check("make_loss", rtol=1e-12, atol=0.0)
        self.assertEqual(r.status, "inconclusive", r.table())
        self.assertTrue(r.ok)


if __name__ == "__main__":
    unittest.main()
