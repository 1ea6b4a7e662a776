"""Issue 60's findings about the JAX check, each a test that fails without its fix."""

import os
import unittest

import collgrad_jax as cgj

HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = os.path.join(HERE, "jax_fd_scale.py")
WRAPPED = os.path.join(HERE, "jax_wrapped.py")
PATTERNS = os.path.join(HERE, "jax_patterns.py")
TORCH_WORDS = ("c10d", "DTensor", "torch", "checkpoint", "rank ")


class Patterns(unittest.TestCase):
    """Item 7: a zero candidate is no pattern of its own; nan equals nan when
    copies or check_vma's flip are compared; JAX's words on JAX code."""

    def no_torch_words(self, r):
        text = "\n".join([r.table()] + [p for c in r.checks for p in c.patterns])
        for w in TORCH_WORDS:
            self.assertNotIn(w, text.replace("per_rank semantics", ""), r.table())

    def test_pipeline_backward_the_wrong_way_is_x_0(self):
        r = cgj.check(f"{PATTERNS}:make_loss_pipeline_wrong_way", inputs=f"{PATTERNS}:make_inputs", world=2,
                      vma="as_written")
        self.assertEqual(r.status, "fail", r.table())
        x0 = next(c for c in r.checks if c.tensor.startswith("x") and c.rank == 0)
        self.assertFalse(x0.ok, r.table())
        self.assertTrue(all(o == 0.0 for o in x0.observed))
        self.assertTrue(x0.patterns[0].startswith("x 0: no gradient path"), x0.patterns)
        self.assertFalse(any("replicated semantics only" in p for p in x0.patterns), x0.patterns)
        self.no_torch_words(r)

    def test_nan_gradients_are_not_diverging_replicas_nor_a_flip(self):
        r = cgj.check(f"{PATTERNS}:make_loss_where_sqrt", inputs=f"{PATTERNS}:make_inputs", world=2)
        self.assertEqual(r.status, "fail", r.table())
        w = [c for c in r.checks if c.tensor.startswith("w")]
        self.assertTrue(w and all(not c.ok for c in w), r.table())
        for c in w:
            self.assertTrue(c.patterns[0].startswith("not finite"), c.patterns)
            self.assertIn("jnp.where", c.patterns[0])
            self.assertFalse(any("replicas diverge" in p for p in c.patterns), c.patterns)
        self.assertFalse(any("replicas diverge" in n for n in r.notes), r.notes)
        self.assertFalse(any("the gradients differ" in n for n in r.notes), r.notes)
        self.no_torch_words(r)


class WrappedLosses(unittest.TestCase):
    """Item 6: f under jax.jit (donating or not), functools.partial, or plain,
    its inputs given by make_inputs in another order: all are checked."""

    def test_every_wrapping_at_w2_and_w4(self):
        for fn in ("make_loss_plain", "make_loss_jit", "make_loss_jit_donate", "make_loss_partial",
                   "make_loss_jit_partial"):
            for world in (2, 4):
                with self.subTest(fn=fn, world=world):
                    r = cgj.check(f"{WRAPPED}:{fn}", inputs=f"{WRAPPED}:make_inputs", world=world,
                                  vma="as_written")
                    self.assertEqual(r.status, "pass", r.table())
                    self.assertEqual(sorted({c.tensor.split("[")[0] for c in r.checks}), ["w", "x"])


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



def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _running(pid):
    """A live process (not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Signals(unittest.TestCase):
    """Item 3 for the JAX check's command line: SIGTERM during a hang ends the
    device process at once and writes the report, exit 3."""

    def test_sigterm_during_a_hang(self):
        import json
        import signal
        import subprocess
        import sys
        import tempfile
        import time

        bad = os.path.join(HERE, "jax_bad.py")
        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(tmp, "t")
            os.mkdir(work)
            env = dict(os.environ, TMPDIR=work,
                       PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(HERE))] + sys.path))
            p = subprocess.Popen([sys.executable, "-m", "collgrad_jax", "check", f"{bad}:make_loss_hangs", "--inputs",
                                  f"{bad}:make_inputs", "--world", "2", "--json", f"{tmp}/r.json"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            time.sleep(6)   # jax imported, make_loss asleep
            device = [int(d) for d in os.listdir("/proc") if d.isdigit() and _cmdline(int(d)).find(work) >= 0]
            self.assertEqual(len(device), 1, device)   # the device process, its spec under our TMPDIR
            t0 = time.monotonic()
            p.send_signal(signal.SIGTERM)
            out, _ = p.communicate(timeout=30)
            text = out.decode(errors="replace")
            self.assertLess(time.monotonic() - t0, 2.0, text)
            self.assertEqual(p.returncode, 3, text)
            with open(f"{tmp}/r.json", encoding="utf-8") as f:
                case = json.load(f)["cases"][0]
            self.assertIn("interrupted by signal 15 (SIGTERM)", case["message"])
            self.assertEqual([pid for pid in device if _running(pid)], [], text)   # the device process is gone
            self.assertEqual(os.listdir(work), [], text)


if __name__ == "__main__":
    unittest.main()
