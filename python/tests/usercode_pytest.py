"""The collgrad pytest plugin end to end (issue 36 item 1), each session a
pytest of its own, its verdicts read from pytest's --junitxml and the
plugin's --collgrad-json reports:

- examples/user_code/test_examples.py at W=2 and 4 in one session: every
  correct example passes; every buggy one (xfail, strict) fails, and its
  report names the pattern usercode_examples.CASES gives (worked out by hand
  in each example's docstring); the rank processes start once per world size.
- pytest_cases/test_plugin_cases.py: a wrong gradient fails with the table, a
  raising and a hanging test are named and the tests after them run, NCCL
  skips where there are no GPUs, an unmarked test is untouched.
- the installed package declares the pytest11 entry point.
"""

import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from typing import Any, Dict, List, Tuple

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from usercode_examples import CASES  # noqa: E402


def pytest_session(*files: str, extra: Tuple[str, ...] = ()) -> Tuple[str, Dict[str, Tuple[str, str]], Dict[Tuple[str, int], Any]]:
    """Run pytest on files; (stdout, {test id: (outcome, message)}, {(test, world): report case})."""
    with tempfile.TemporaryDirectory() as tmp:
        junit, reports = os.path.join(tmp, "j.xml"), os.path.join(tmp, "reports")
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
                   PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH", "")]))
        out = subprocess.run([sys.executable, "-m", "pytest", "-p", "collgrad_core.pytest_plugin", "-q",
                              "-p", "no:cacheprovider", "--junitxml", junit, "--collgrad-json", reports,
                              *extra, *files], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        outcomes: Dict[str, Tuple[str, str]] = {}
        for tc in ET.parse(junit).getroot().iter("testcase"):
            outcome, message = "passed", ""
            for child in tc:
                if child.tag in ("failure", "error", "skipped"):
                    outcome = "xfailed" if child.get("type") == "pytest.xfail" else child.tag
                    message = (child.get("message") or "") + "\n" + (child.text or "")
            outcomes[tc.get("name", "")] = (outcome, message)
        cases: Dict[Tuple[str, int], Any] = {}
        for path in glob.glob(os.path.join(reports, "*.json")):
            with open(path, encoding="utf-8") as f:
                for case in json.load(f)["cases"]:
                    cases[(case["name"].rsplit("::", 1)[1], case["world"])] = case
        return out.stdout + out.stderr, outcomes, cases


def starts(stdout: str) -> int:
    m = re.search(r"collgrad: \d+ check\(s\); rank processes started (\d+) time", stdout)
    return int(m.group(1)) if m else -1


class Plugin(unittest.TestCase):
    def test_examples_in_one_session(self) -> None:
        out, outcomes, cases = pytest_session("examples/user_code/test_examples.py")
        want: List[str] = []
        for module, name, args, status, pattern in CASES:
            for world in (2, 4):
                test = f"test_{name}[W={world}]"
                want.append(test)
                got, message = outcomes.get(test, ("missing", ""))
                self.assertEqual(got, "passed" if status == "pass" else "xfailed", f"{test}: {message}\n{out}")
                case = cases[(f"test_{name}", world)]
                self.assertEqual(case["status"], status, test)
                if status == "fail":
                    p = pattern.get(world) if isinstance(pattern, dict) else pattern
                    notes = [c.get("note", "") for c in case["checks"] if c["status"] == "fail"]
                    self.assertTrue(notes and all(p in n for n in notes), f"{test}: {p!r} not in {notes}")
        self.assertEqual(sorted(outcomes), sorted(want))
        self.assertEqual(starts(out), 2, out)  # once per world size for the whole session
        passing = 2 * sum(1 for case in CASES if case[3] == "pass")
        self.assertIn(f"{passing} passed, {len(want) - passing} xfailed", out)

    def test_what_goes_wrong(self) -> None:
        out, outcomes, cases = pytest_session("python/tests/pytest_cases/test_plugin_cases.py",
                                              extra=("--collgrad-shrink", "30"))
        outcome, message = outcomes["test_c10d_without_autograd[W=2]"]
        self.assertEqual(outcome, "failure", out)
        # --collgrad-shrink: #58005's shape needs two ranks, one element each is enough
        self.assertIn("shrunk: W=2, x[1] (1 element)  ->  W=2, x[1] (1 element)", message)
        # the interpreter that ran the session and the script's absolute path (issue 63 item 6)
        self.assertRegex(message, rf"reproduction: {re.escape(sys.executable)} /\S+test_c10d_without_autograd_W_2_repro\.py")
        # seeds/002: 20 and 30 against the per-rank truth 40 and 60, the table with its pattern
        self.assertRegex(message, r"\n +0  x .*WRONG +20/40\n +pattern: right under replicated semantics only")
        self.assertRegex(message, r"\n +1  x .*WRONG +30/60\n")
        outcome, message = outcomes["test_raises_on_rank_1[W=2]"]
        self.assertEqual(outcome, "failure", out)
        self.assertIn("ValueError: rank 1 does not like its input", message)
        outcome, message = outcomes["test_hangs[W=2]"]
        self.assertEqual(outcome, "failure", out)
        self.assertIn("no rank moved on for 3 s", message)
        self.assertRegex(message, r"waits in all_reduce, called from .*test_plugin_cases\.py:\d+ \(test_hangs\)")
        self.assertEqual(outcomes["test_after_the_hang[W=2]"][0], "passed", out)
        if torch.cuda.device_count() < 2:
            outcome, message = outcomes["test_over_nccl[W=2]"]
            self.assertEqual(outcome, "skipped", out)
            self.assertIn("NCCL", message)
        self.assertEqual(outcomes["test_unmarked"][0], "passed", out)
        # the raise and the hang each replaced the W=2 world (the shrink tried W=1 in a world of its own)
        self.assertIn("W=2 gloo: 3)", out)
        self.assertEqual(cases[("test_hangs", 2)]["status"], "error")

    def test_misuse_is_one_line_each(self) -> None:
        # once: check()'s TypeError or CheckError with the plugin's traceback, and a method or a
        # parametrized test ran with arguments missing ("missing 1 required positional argument")
        out, outcomes, _ = pytest_session("python/tests/pytest_cases/test_plugin_misuse.py")
        want = {
            "test_unknown_keyword[W=2]": "the collgrad marker has no keyword bogus (it takes world, inputs,",
            "test_world_zero[W=0]": "world sizes must be positive integers, got 0",
            "test_negative_atol[W=2]": "atol must be a finite number >= 0, got -1",
            "test_inputs_not_there[W=2]": "inputs='no_such_function' is not a function of the test's module",
            "test_method[W=2]": "TestInAClass.test_method is a method: a collgrad test must be a module-level",
            "test_parametrized[W=2]": "pytest.mark.parametrize does not reach a collgrad test",
        }
        self.assertEqual(sorted(outcomes), sorted(want), out)
        for test, line in want.items():
            outcome, message = outcomes[test]
            self.assertEqual(outcome, "failure", f"{test}\n{out}")
            self.assertIn("collgrad: " + line, message, test)
            self.assertNotIn("Traceback", message, test)
            self.assertNotIn("pytest_plugin.py", message, test)
        self.assertNotIn("rank processes started", out)  # no check ran

    def test_bad_plugin_options_stop_the_session(self) -> None:
        # once: a --collgrad-json folder that cannot be made was an OSError's traceback in each
        # marked test after its check; --collgrad-shrink -1 or nan was taken as given
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
                   PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH", "")]))
        for extra, line in ((("--collgrad-json", "/proc/collgrad"), "--collgrad-json /proc/collgrad: cannot write there"),
                            (("--collgrad-json", ""), "--collgrad-json '': expected a directory"),
                            (("--collgrad-shrink", "-1"), "--collgrad-shrink: expected a finite number of seconds >= 0"),
                            (("--collgrad-shrink", "nan"), "--collgrad-shrink: expected a finite number of seconds >= 0")):
            with self.subTest(extra=extra):
                out = subprocess.run([sys.executable, "-m", "pytest", "-p", "collgrad_core.pytest_plugin", "-q",
                                      "-p", "no:cacheprovider", *extra, "examples/user_code/test_examples.py"],
                                     cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
                self.assertEqual(out.returncode, 4, out.stdout + out.stderr)  # pytest's usage error
                self.assertIn(line, out.stderr)
                self.assertNotIn("rank processes started", out.stdout)

    def test_marker_keywords_are_checks(self) -> None:
        import inspect

        from collgrad_core import pytest_plugin
        from collgrad_torch.checker import check

        params = set(inspect.signature(check).parameters)
        self.assertEqual(set(pytest_plugin.torch_keywords()) - params, {"framework"})  # the marker's own word
        self.assertEqual(params - set(pytest_plugin.torch_keywords()), {"fn", "python", "roots"})

    def test_under_xdist(self) -> None:
        # two xdist workers, each with warm worlds of its own under its own temporary directory
        if importlib.util.find_spec("xdist") is None:
            self.skipTest("no pytest-xdist here (scripts/setup.sh installs python3-pytest-xdist)")
        out, outcomes, cases = pytest_session("examples/user_code/test_examples.py", extra=(
            "-p", "xdist.plugin", "-n", "2", "-k", "sum_nn or sum_c10d or blog_gatherlayer"))
        self.assertEqual(sorted(outcomes), sorted(f"test_{n}[W={w}]" for n in ("sum_nn", "sum_c10d",
                                                                               "blog_gatherlayer") for w in (2, 4)))
        for test, (outcome, message) in outcomes.items():
            self.assertEqual(outcome, "passed" if "sum_nn" in test else "xfailed", f"{test}: {message}\n{out}")
        self.assertEqual([c["status"] for c in cases.values()].count("fail"), 4)
        # seeds/003 through both workers' worlds: the blog's GatherLayer gives 6 and 9 against 12 and 18
        got = [(k["observed"][0], round(k["expected"][0], 6)) for k in cases[("test_blog_gatherlayer", 2)]["checks"]]
        self.assertEqual(got, [(6.0, 12.0), (9.0, 18.0)])

    def test_the_old_plugin_name_still_loads_it_once(self) -> None:
        # -p collgrad_torch.checker.pytest_plugin (the name before collgrad_core), with the entry point
        # autoloaded beside it and without: one plugin, one check per marked test, a DeprecationWarning
        for autoload in ("1", ""):
            with self.subTest(entry_point_too=bool(autoload)), tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(tmp, "test_old.py"), "w", encoding="utf-8") as f:
                    f.write("import pytest, torch\n\n\ndef make_inputs(rank, world):\n"
                            "    return {'x': torch.ones(2, dtype=torch.float64, requires_grad=True)}\n\n\n"
                            "@pytest.mark.collgrad(world=[2], inputs=make_inputs)\n"
                            "def test_square(rank, world, x):\n    return (x * x).sum()\n")
                env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
                env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
                if not autoload:
                    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
                out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W",
                                      "always::DeprecationWarning", "-p", "collgrad_torch.checker.pytest_plugin",
                                      "test_old.py"], cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                self.assertIn("collgrad: 1 check(s)", out.stdout)
                self.assertIn("1 passed", out.stdout)

    def test_entry_point(self) -> None:
        from importlib import metadata

        try:
            metadata.distribution("collgrad-torch")
        except metadata.PackageNotFoundError:
            self.skipTest("collgrad-torch is not installed here (scripts/setup.sh installs it)")
        eps = metadata.entry_points()
        group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
        self.assertIn("collgrad_core.pytest_plugin", [e.value for e in group])


if __name__ == "__main__":
    unittest.main()
