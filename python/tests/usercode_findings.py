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
SLOW = os.path.join(HERE, "usercode_slow.py")
ACCUM = os.path.join(HERE, "usercode_accumulate.py")
KINDS = ["TypeError", "AttributeError", "KeyError", "IndexError", "AssertionError", "NotImplementedError",
         "RuntimeError"]


class UserErrorsAreTheCode(unittest.TestCase):
    """Item 1: whatever the user's code raises is exit 2, the code's fault;
    only a dead rank, a hang or the transport's own errors are 3."""

    def expect_code(self, r: cg.Result, kind: str) -> None:
        self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
        self.assertIn(kind, r.error or "")

    def test_raised_by_fn_make_inputs_and_the_step(self) -> None:
        # every kind from fn; from make_inputs and the step (the same handler) the two once taken
        # for the infrastructure's (a TypeError, a RuntimeError: the transport's own kind)
        for kind in KINDS:
            for what in ("fn", "inputs", "step") if kind in ("TypeError", "RuntimeError") else ("fn",):
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
            from collgrad_core import report

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


def _running(pid: int) -> bool:
    """Whether pid is a live process (a zombie, ended but not yet reaped by
    whoever inherited it, is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Signals(unittest.TestCase):
    """Item 3: SIGTERM or SIGINT to the command line during the forward,
    during finite differences and during a hang: every process the check
    started ends within 2 s, nothing of it stays in TMPDIR, the reports are
    written with the check as interrupted, and the exit status is 3."""

    def ranks(self, tmp: str) -> "list[tuple[int, str]]":
        """(pid, phase) of every rank of the running check, from its status files."""
        import glob

        out = []
        for path in glob.glob(os.path.join(tmp, "**", "collgrad-check-*", "rank*.status"), recursive=True):
            try:
                with open(path, encoding="utf-8") as f:
                    pid, _, phase = f.read().strip().partition("\t")
                out.append((int(pid), phase))
            except (OSError, ValueError):
                pass
        return sorted(dict(out).items())   # one entry per rank (pytest's basetemp links show a file twice)

    def interrupt(self, fn: str, sig: int, phase: str, *extra: str) -> None:
        import json
        import signal
        import subprocess
        import time

        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(tmp, "t")
            os.mkdir(work)
            env = dict(os.environ, TMPDIR=work, PYTHONPATH=os.pathsep.join([os.path.dirname(HERE)] + sys.path))
            p = subprocess.Popen([sys.executable, "-m", "collgrad_torch", "check", f"{SLOW}:{fn}", "--inputs",
                                  f"{SLOW}:make_inputs", "--world", "2", "--json", f"{tmp}/r.json", "--junit",
                                  f"{tmp}/j.xml", *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            deadline, seen = time.monotonic() + 60, []
            while time.monotonic() < deadline:
                seen = self.ranks(work)
                if len(seen) == 2 and phase in dict(seen)[min(dict(seen))]:   # rank 0's (the lower pid's) phase
                    break
                time.sleep(0.05)
            self.assertTrue(len(seen) == 2 and phase in dict(seen)[min(dict(seen))], seen)
            pids = [pid for pid, _ in seen]
            with open(f"/proc/{pids[0]}/stat", encoding="ascii") as f:
                pids.append(int(f.read().rsplit(")", 1)[1].split()[1]))   # spawn.py, the ranks' parent
            t0 = time.monotonic()
            p.send_signal(sig)
            while any(_running(pid) for pid in pids) and time.monotonic() - t0 < 10:
                time.sleep(0.01)
            ended = time.monotonic() - t0   # every process the check started is gone
            out, _ = p.communicate(timeout=30)
            text = out.decode(errors="replace")
            self.assertLess(ended, 2.0, text)
            self.assertEqual(p.returncode, 3, text)
            self.assertEqual([pid for pid in pids if _running(pid)], [], text)
            self.assertEqual(os.listdir(work), [], text)
            with open(f"{tmp}/r.json", encoding="utf-8") as f:
                case = json.load(f)["cases"][0]
            self.assertEqual(case["status"], "error")
            self.assertIn(f"interrupted by signal {int(sig)} ({signal.Signals(sig).name})", case["message"])
            with open(f"{tmp}/j.xml", encoding="utf-8") as f:
                self.assertIn("interrupted by signal", f.read())
            self.assertNotIn("Traceback", text)

    def test_each_signal_in_each_phase(self) -> None:
        import signal

        for sig in (signal.SIGTERM, signal.SIGINT):
            for fn, phase, extra in (("slow", "analytic pass", ()), ("slow", "finite differences", ()),
                                     ("hangs", "analytic pass", ("--timeout", "60"))):
                with self.subTest(signal=sig.name, fn=fn, phase=phase):
                    self.interrupt(fn, sig, phase, *extra)

    def test_sigterm_to_pytest_ends_the_warm_world(self) -> None:
        import signal
        import subprocess
        import time

        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(tmp, "t")
            os.mkdir(work)
            with open(os.path.join(tmp, "test_slow.py"), "w", encoding="utf-8") as f:
                f.write("import pytest\n"
                        f"import sys; sys.path.insert(0, {HERE!r})\n"
                        "import usercode_slow as s\n\n"
                        "@pytest.mark.collgrad(world=[2], inputs=s.make_inputs)\n"
                        "def test_slow(rank, world, x):\n"
                        "    return s.slow(rank, world, x)\n")
            env = dict(os.environ, TMPDIR=work, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
                       PYTHONPATH=os.pathsep.join([os.path.dirname(HERE)] + sys.path))
            p = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "collgrad_core.pytest_plugin",
                                  "-p", "no:cacheprovider", "test_slow.py"], cwd=tmp, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            deadline, seen = time.monotonic() + 60, []
            while time.monotonic() < deadline and not (len(seen) == 2 and
                                                       any("finite differences" in ph for _, ph in seen)):
                seen = self.ranks(work)
                time.sleep(0.05)
            pids = [pid for pid, _ in seen]
            self.assertEqual(len(pids), 2, seen)
            t0 = time.monotonic()
            p.send_signal(signal.SIGTERM)
            while any(_running(pid) for pid in pids) and time.monotonic() - t0 < 10:
                time.sleep(0.01)
            ended = time.monotonic() - t0   # the ranks' end; pytest's own exit may take longer
            out, _ = p.communicate(timeout=30)
            self.assertLess(ended, 2.0, out.decode(errors="replace"))
            self.assertEqual(p.returncode, 2, out.decode(errors="replace"))   # pytest's "interrupted"
            import glob
            self.assertEqual(glob.glob(os.path.join(work, "**", "collgrad-warm-*"), recursive=True), [])


class AccumulationCount(unittest.TestCase):
    """Item 15: at W=2 a step that accumulates 2 microbatches undivided is off
    by 2, and read as its accumulation count first, not as 'x W'."""

    def test_count_before_world(self) -> None:
        r = cg.check(step=f"{ACCUM}:accumulate_no_divide", inputs=f"{ACCUM}:make_inputs", world=2,
                     reduction="mean")
        self.assertEqual(r.status, "fail", r.table())
        for c in r.checks:
            self.assertFalse(c.ok)
            for o, t in zip(c.observed, c.truth):
                self.assertAlmostEqual(o, 2 * t, delta=1e-6 * (1 + abs(t)))
            self.assertTrue(c.patterns[0].startswith("x 2: the step called backward 2 times"), c.patterns)


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
