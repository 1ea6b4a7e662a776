"""python -m collgrad_jax check from a shell: exit 0/1/2/3 as the issue
fixes them, one clear line for each way a check cannot run (and what the
device process printed before it died), and the reports."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import collgrad_jax as cgj

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "jax_bad.py")
PSUM = os.path.abspath(os.path.join(HERE, "..", "..", "..", "examples", "jax", "psum.py"))


def cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(HERE))] + sys.path))
    return subprocess.run([sys.executable, "-m", "collgrad_jax", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


class Exits(unittest.TestCase):
    def test_pass_fail_and_reports(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = cli("check", f"{PSUM}:make_loss", f"{PSUM}:make_loss_bug", "--inputs", f"{PSUM}:make_inputs",
                      "--world", "2", "--json", f"{tmp}/r.json", "--junit", f"{tmp}/j.xml")
            self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
            self.assertIn("1 of 2 checks passed: wrong gradients", out.stdout)
            with open(f"{tmp}/r.json") as f:
                report = json.load(f)
            self.assertEqual(report["framework"]["name"], "jax")
            self.assertEqual([c["status"] for c in report["cases"]], ["pass", "fail"])
            self.assertIn("over_world", report["cases"][1]["diagnosis"]["matches"])
            with open(f"{tmp}/j.xml") as f:
                junit = f.read()
            self.assertIn('classname="collgrad_jax.check.jax:cpu.W2"', junit)
            out = cli("check", f"{PSUM}:make_loss", "--inputs", f"{PSUM}:make_inputs", "--world", "2,4")
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_usage(self):
        for args, words in ((["check", "--world", "2"], "required"),
                            (["check", f"{BAD}:make_loss_right", "--inputs", f"{BAD}:make_inputs", "--world", "0"],
                             "positive"),
                            (["check", f"{HERE}/nope.py:f", "--inputs", f"{BAD}:make_inputs"], "no such file"),
                            (["frobnicate"], "usage"),
                            (["check", f"{BAD}:make_loss_right", "--inputs", f"{BAD}:make_inputs", "--mesh", "dp=2",
                              "--world", "2"], "not both"),
                            (["check", f"{BAD}:make_loss_right", "--inputs", f"{BAD}:make_inputs", "--mesh", "dp=0"],
                             "NAME=SIZE")):
            out = cli(*args)
            self.assertEqual(out.returncode, 2, out.stdout + out.stderr)
            self.assertIn(words, out.stdout + out.stderr)

    def test_help_is_an_answer_on_stdout(self):
        # as python -m collgrad_torch --help: asked for, the usage goes to stdout with status 0, and points
        # at the command's own --help (not at itself)
        out = cli("--help")
        self.assertEqual((out.returncode, out.stderr), (0, ""), out.stdout + out.stderr)
        self.assertIn("(check --help)", out.stdout)
        out = cli("check", "--help")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("--inputs", out.stdout)
        out = cli("frobnicate")
        self.assertEqual(out.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", out.stderr)

    def test_bad_functions_are_exit_2_with_their_reason(self):
        cases = (("make_loss_right", "inputs_not_a_dict", "must return a dict of global arrays"),
                 ("make_loss_right", "inputs_raise", "RuntimeError: no data for this world"),
                 ("make_loss_raises", "make_inputs", "ValueError: cannot build the model"),
                 ("make_loss_not_callable", "make_inputs", "must return f"),
                 ("make_loss_vector", "make_inputs", "got shape [4]"),
                 ("make_loss_pmax", "make_inputs", "NotImplementedError"),
                 ("make_loss_random", "make_inputs", "non-deterministic forward"),
                 ("make_loss_right", "missing_name", "has no 'missing_name'"))
        for fn, inputs, words in cases:
            with self.subTest(fn=fn, inputs=inputs):
                out = cli("check", f"{BAD}:{fn}", "--inputs", f"{BAD}:{inputs}", "--world", "2")
                self.assertEqual(out.returncode, 2, out.stdout + out.stderr)
                self.assertIn(words, out.stdout)

    def test_infrastructure_is_exit_3_and_keeps_the_output(self):
        out = cli("check", f"{BAD}:make_loss_dies", "--inputs", f"{BAD}:make_inputs", "--world", "2")
        self.assertEqual(out.returncode, 3, out.stdout + out.stderr)
        self.assertIn("the device process (devices 0-1, one process) ended during make_loss with exit status 9, "
                      "without a result; its output ends:", out.stdout)
        self.assertIn("about to die: this line must reach the error", out.stdout)
        out = cli("check", f"{BAD}:make_loss_hangs", "--inputs", f"{BAD}:make_inputs", "--world", "2",
                  "--timeout", "5")
        self.assertEqual(out.returncode, 3, out.stdout + out.stderr)
        self.assertRegex(out.stdout, r"the device process \(devices 0-1, one process\) did not move on for 5 s "
                                     r"\(timeout=\) during make_loss: a hang; it is at .*jax_bad\.py:\d+ "
                                     r"\(make_loss_hangs\)")
        self.assertIn("sleeping", out.stdout)
        # killed by a signal, having printed nothing: both said
        out = cli("check", f"{BAD}:make_loss_killed", "--inputs", f"{BAD}:make_inputs", "--world", "2")
        self.assertEqual(out.returncode, 3, out.stdout + out.stderr)
        self.assertIn("ended during make_loss with signal 9 (SIGKILL), without a result; it printed nothing",
                      out.stdout)
        # a hang inside the compiled computation: named by the jitted call and the user's line
        out = cli("check", f"{BAD}:make_loss_hangs_in_callback", "--inputs", f"{BAD}:make_inputs", "--world", "2",
                  "--timeout", "5")
        self.assertEqual(out.returncode, 3, out.stdout + out.stderr)
        self.assertRegex(out.stdout, r"did not move on for 5 s \(timeout=\) during .*: a hang; it .*jax_bad\.py:\d+")


class Api(unittest.TestCase):
    def test_bad_arguments_raise_before_anything_starts(self):
        for kwargs in ({"world": 0}, {"world": True}, {"fd": "elementwise"}, {"reduction": "avg"},
                       {"atol": float("nan")}, {"vma": "flip"}, {"seed": -1}, {"timeout": 0}):
            with self.subTest(kwargs=kwargs), self.assertRaises(cgj.CheckError):
                cgj.check(f"{BAD}:make_loss_right", inputs=f"{BAD}:make_inputs", **kwargs)
        with self.assertRaises(cgj.CheckError):
            cgj.check(lambda mesh: None, inputs=f"{BAD}:make_inputs")
        for kwargs in ({"mesh": {"dp": 2, "tp": 2}, "world": 2}, {"mesh": {"dp": 0}}, {"mesh": {"1x": 2}},
                       {"mesh": {"dp": 64, "tp": 2}}, {"mesh": []}):
            with self.subTest(kwargs=kwargs), self.assertRaises(cgj.CheckError):
                cgj.check(f"{BAD}:make_loss_right", inputs=f"{BAD}:make_inputs", **kwargs)

    def test_assert_gradients_and_fast_mode(self):
        r = cgj.assert_gradients(f"{PSUM}:make_loss", world=2, inputs=f"{PSUM}:make_inputs", fd="fast")
        self.assertEqual(r.fd, "fast")
        self.assertEqual(len(r.checks), 4)  # x and w, each one direction per device block
        with self.assertRaises(cgj.GradientMismatch) as e:
            cgj.assert_gradients(f"{PSUM}:make_loss_bug", world=2, inputs=f"{PSUM}:make_inputs", fd="fast")
        self.assertIn("WRONG", str(e.exception))


if __name__ == "__main__":
    unittest.main()
