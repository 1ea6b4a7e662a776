"""The pytest plugin's JAX tests (@pytest.mark.collgrad(framework="jax")):
pytest over pytest_cases/test_marked_jax.py in a process of its own, with the
plugin loaded by name (this venv does not install the package), and the
outcomes it must give: the right function passes at W=2 and 4, the planted
bug fails with its pattern in the report, a keyword the JAX check does not
take fails with one line naming it."""

import os
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))


class Marker(unittest.TestCase):
    def test_outcomes(self):
        try:
            import pytest  # noqa: F401
        except ImportError:
            self.skipTest("no pytest here (scripts/jax-venv.sh installs it)")
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(HERE))] + sys.path))
            out = subprocess.run([sys.executable, "-m", "pytest", "-p", "collgrad_core.pytest_plugin",
                                  "-p", "no:cacheprovider", "-q", f"--junitxml={tmp}/j.xml",
                                  os.path.join(HERE, "pytest_cases", "test_marked_jax.py")],
                                 capture_output=True, text=True, timeout=600, env=env, cwd=tmp)
            text = out.stdout + out.stderr
            self.assertEqual(out.returncode, 1, text)
            cases = {c.get("name"): c for c in ET.parse(f"{tmp}/j.xml").getroot().iter("testcase")}
        outcome = {n: ("failed" if c.find("failure") is not None else
                       "error" if c.find("error") is not None else "passed") for n, c in cases.items()}
        self.assertEqual(outcome, {"test_gather_right[W=2]": "passed", "test_gather_right[W=4]": "passed",
                                   "test_gather_own_block[W=2]": "failed", "test_gather_backend[W=2]": "failed",
                                   "test_dp_tp_mesh[mesh=dp=2,tp=2]": "passed"},
                         text)
        self.assertIn("only this device's own loss reaches it", text)   # JAX's words (issue 60 item 7)
        self.assertIn("the collgrad marker with framework=jax has no keyword backend", text)
        self.assertNotIn("import torch", text)


if __name__ == "__main__":
    unittest.main()
