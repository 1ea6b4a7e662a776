"""collgrad_jax's type hints, checked: mypy over the package (every function
annotated), with jax's own hints; skipped where this interpreter has no mypy
(scripts/jax-venv.sh installs it)."""

import os
import tempfile
import unittest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Types(unittest.TestCase):
    def test_mypy(self):
        try:
            from mypy import api
        except ImportError:
            self.skipTest("no mypy here (scripts/jax-venv.sh installs it)")
        with tempfile.TemporaryDirectory() as cache:
            old = os.environ.get("MYPYPATH")
            os.environ["MYPYPATH"] = PYTHON_DIR
            try:  # no config file: python/pyproject.toml's [tool.mypy] names the torch package's oldest Python
                out, err, status = api.run(["--config-file", os.devnull, "--ignore-missing-imports",
                                            "--disallow-untyped-defs", "--cache-dir", cache, "-p", "collgrad_jax"])
            finally:
                if old is None:
                    del os.environ["MYPYPATH"]
                else:
                    os.environ["MYPYPATH"] = old
        self.assertEqual(status, 0, out + err)

    def test_a_misspelt_option_is_a_type_error(self):
        try:
            from mypy import api
        except ImportError:
            self.skipTest("no mypy here")
        code = ("import collgrad_jax\n"
                "collgrad_jax.check('f.py:make_loss', inputs='f.py:make_inputs', fd='elementwise')\n")
        with tempfile.TemporaryDirectory() as cache:
            os.environ["MYPYPATH"] = PYTHON_DIR
            try:
                out, _, status = api.run(["--config-file", os.devnull, "--ignore-missing-imports",
                                          "--cache-dir", cache, "-c", code])
            finally:
                del os.environ["MYPYPATH"]
        self.assertNotEqual(status, 0, out)
        self.assertIn("fd", out)


if __name__ == "__main__":
    unittest.main()
