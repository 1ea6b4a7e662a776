"""The JAX check's verdicts without JAX: Measured records written by hand
from the math (a loss whose derivatives are known), judged into Results."""

import copy
import sys
import unittest

from collgrad_jax import judge
from collgrad_core import patterns
from collgrad_core.result import Result


def _result(world=2, reduction="sum"):
    return Result(name="t", world=world, backend="jax:cpu", kind="fn", semantics="per_rank", reduction=reduction,
                  framework="jax")


def _measured(inputs, losses=1, base=None, flipped=None, written=(True,)):
    return {"jax": "0.test", "mode": "element", "losses": losses, "base": base or [[1.0] * losses] * 3,
            "inputs": inputs, "written": list(written), "flipped": flipped, "notes": []}


def _sharded(name, rows_per_device, observed_per_device, n=2):
    """x of W*n elements, sharded: device d holds [d*n:(d+1)*n]."""
    blocks = [{"device": d, "index": f"[{d * n}:{(d + 1) * n}]", "observed": list(o), "rows": [list(r) for r in rows]}
              for d, (rows, o) in enumerate(zip(rows_per_device, observed_per_device))]
    return {"name": name, "shape": [n * len(blocks)], "spec": "P('i',)", "blocks": blocks}


def _copies(name, rows, observed_per_device):
    """w replicated on every device: each holds the whole array."""
    blocks = [{"device": d, "index": "[:]", "observed": list(o), "rows": [list(r) for r in rows]}
              for d, o in enumerate(observed_per_device)]
    return {"name": name, "shape": [len(rows)], "spec": "P()", "blocks": blocks}


def _keys(r):
    return {patterns.key(p) for c in r.checks for p in c.patterns}


class Verdicts(unittest.TestCase):
    # L = 3 x0 + 5 x1 - 2 x2 + 7 x3 (one global loss): d L / d x = (3, 5, -2, 7)
    rows = [[[3.0], [5.0]], [[-2.0], [7.0]]]

    def test_right_blocks_pass(self):
        r = _result()
        judge.judge(_measured([_sharded("x", self.rows, [[3, 5], [-2, 7]])]), r)
        self.assertEqual(r.status, "pass", r.table())
        self.assertEqual([(c.rank, c.tensor) for c in r.checks], [(0, "x[0:2]"), (1, "x[2:4]")])
        self.assertEqual(r.framework_version, "0.test")

    def test_times_world_and_over_world(self):
        r = _result()
        judge.judge(_measured([_sharded("x", self.rows, [[6, 10], [-1, 3.5]])]), r)
        self.assertEqual(r.status, "fail")
        self.assertIn("times_world", {patterns.key(p) for p in r.checks[0].patterns})
        self.assertIn("over_world", {patterns.key(p) for p in r.checks[1].patterns})

    def test_own_loss_needs_per_device_losses(self):
        # two losses: L_0 = x0 + 2 x2, L_1 = 4 x0 + x2 (x0 on device 0, x2 on device 1; one element each)
        rows = [[[1.0, 4.0]], [[2.0, 1.0]]]
        own = [[1.0], [1.0]]   # device 0: d L_0 / d x0 = 1; device 1: d L_1 / d x2 = 1
        r = _result()
        judge.judge(_measured([_sharded("x", rows, own, n=1)], losses=2, base=[[1.0, 2.0]] * 3), r)
        self.assertEqual(r.status, "fail", r.table())
        self.assertEqual([c.truth for c in r.checks], [[5.0], [3.0]])
        self.assertIn("own_loss", _keys(r))

    def test_partial_and_diverging_copies(self):
        rows = [[4.0], [6.0]]   # d L / d w
        r = _result()
        judge.judge(_measured([_copies("w", rows, [[1.0, 2.0], [3.0, 4.0]])]), r)   # copies sum to the truth
        self.assertEqual(r.status, "fail")
        self.assertTrue(all(c.replicated and c.over == "i" for c in r.checks))
        self.assertTrue({"partial", "replicas_diverge"} <= _keys(r), r.table())

    def test_mean_of_per_device_losses(self):
        rows = [[[2.0, 4.0]], [[6.0, 8.0]]]   # mean: d (L_0 + L_1)/2 / d x = (3, 7)
        r = _result(reduction="mean")
        judge.judge(_measured([_sharded("x", rows, [[3.0], [7.0]], n=1)], losses=2, base=[[1.0, 1.0]] * 3), r)
        self.assertEqual(r.status, "pass", r.table())

    def test_refused_forwards(self):
        for base, words in (([[1.0], [1.0], [1.5]], "non-deterministic"), ([[float("nan")]] * 3, "not finite")):
            with self.assertRaises(judge.Refused) as e:
                judge.judge(_measured([_sharded("x", self.rows, [[3, 5], [-2, 7]])], base=base), _result())
            self.assertIn(words, str(e.exception))


class Vma(unittest.TestCase):
    def _flipped(self, observed):
        inp = _sharded("x", [[[3.0], [5.0]], [[-2.0], [7.0]]], observed)
        for b in inp["blocks"]:
            b["rows"] = []
        return {"check_vma": False, "base": 1.0, "inputs": [inp]}

    def test_same_differ_refused(self):
        right = [[3, 5], [-2, 7]]
        m = _measured([_sharded("x", [[[3.0], [5.0]], [[-2.0], [7.0]]], right)])
        cases = ((self._flipped(right), "the same gradients"),
                 (self._flipped([[3, 5], [-1, 3.5]]), "the gradients differ (jax 0.test): x on device 1 (wrong "
                                                       "flipped, right as written)"),
                 ({"check_vma": False, "error": "ValueError: types"}, "JAX refuses it (ValueError: types)"))
        for flipped, words in cases:
            r = _result()
            judge.judge(dict(copy.deepcopy(m), flipped=flipped), r)
            self.assertEqual(r.status, "pass")
            vma = [n for n in r.notes if n.startswith("check_vma")]
            self.assertEqual(len(vma), 1, r.notes)
            self.assertIn("as written check_vma=True; flipped to check_vma=False", vma[0])
            self.assertIn(words, vma[0])


class NoTorch(unittest.TestCase):
    def test_the_jax_check_imports_no_torch(self):
        import subprocess
        code = ("import sys; sys.modules['torch'] = None\n"   # an import of torch would raise
                "import collgrad_jax, collgrad_jax.cli, collgrad_jax.judge, collgrad_jax.measure\n"
                "print('ok')")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={"PYTHONPATH": ":".join(sys.path), "JAX_PLATFORMS": "cpu"})
        self.assertEqual(out.stdout.strip(), "ok", out.stderr)


if __name__ == "__main__":
    unittest.main()
