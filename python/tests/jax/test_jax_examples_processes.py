"""The JAX examples (examples/jax/) as a multi-host program (issue 62 item 4):
each function checked at 4 devices spread over 2 processes joined by
jax.distributed (2 x 2, CPU collectives between the processes over gloo)
must give what the one-process check gives: the verdict, and per device and
block whether it is right, replicated over what, with which patterns, and
the same observed gradient. Each function's single-process truth is tested in
test_jax_examples.py; here the two runs of the check must agree."""

import os
import re
import unittest

import numpy as np

import collgrad_jax as cgj

EXAMPLES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "jax"))
MESHES = {"dp_tp": {"dp": 2, "tp": 2}}   # the 2-D example: its mesh; the others a 1-D mesh of 4


def _functions(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r"^def (make_loss\w*)\(mesh\)", f.read(), re.M)


class TwoProcesses(unittest.TestCase):
    def test_the_examples_as_two_hosts(self):
        names = sorted(n[:-3] for n in os.listdir(EXAMPLES) if n.endswith(".py") and n != "sized.py")
        self.assertGreaterEqual(len(names), 9)
        for example in names:
            path = os.path.join(EXAMPLES, f"{example}.py")
            for fn in _functions(path):
                with self.subTest(example=example, fn=fn):
                    mesh = MESHES.get(example)
                    runs = [cgj.check(f"{path}:{fn}", inputs=f"{path}:make_inputs", world=None if mesh else 4,
                                      mesh=mesh, processes=p) for p in (1, 2)]
                    one, two = runs
                    self.assertIsNone(two.error, two.error)
                    self.assertIsNone(one.error, one.error)
                    self.assertEqual(two.status, one.status, two.table())
                    self.assertIn("2 processes (jax.distributed)", two.isolation)
                    self.assertEqual([(c.rank, c.tensor, c.ok, c.over, c.patterns) for c in two.checks],
                                     [(c.rank, c.tensor, c.ok, c.over, c.patterns) for c in one.checks], two.table())
                    for a, b in zip(two.checks, one.checks):
                        np.testing.assert_allclose(a.observed, b.observed, rtol=1e-12, atol=1e-14)
                        np.testing.assert_allclose(a.truth, b.truth, rtol=1e-6, atol=1e-9)

    def test_processes_must_divide_the_devices(self):
        path = os.path.join(EXAMPLES, "psum.py")
        with self.assertRaises(cgj.CheckError) as e:
            cgj.check(f"{path}:make_loss", inputs=f"{path}:make_inputs", world=4, processes=3)
        self.assertIn("processes must be a positive integer dividing the 4 devices, got 3", str(e.exception))


if __name__ == "__main__":
    unittest.main()
