"""The JAX check's tests (python/tests/jax/test_jax*.py, or the files named
by the argument), run with an interpreter that has jax (scripts/jax-venv.sh
makes /opt/venv-jax). Exit 77, which ctest shows as skipped, where jax is
missing, unless CG_REQUIRE_JAX=1 (CI): then that is a failure."""

import importlib.util
import os
import sys
import unittest

if importlib.util.find_spec("jax") is None:
    why = f"{sys.executable} has no jax (scripts/jax-venv.sh makes /opt/venv-jax)"
    if os.environ.get("CG_REQUIRE_JAX") == "1":
        print(f"CG_REQUIRE_JAX=1: {why}")
        sys.exit(1)
    print(f"skipped: {why}")
    sys.exit(77)
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(here)))  # python/: the package from the tree
from tests.timed import TimedResult  # noqa: E402
pattern = sys.argv[1] if len(sys.argv) > 1 else "test_jax*.py"
suite = unittest.defaultTestLoader.discover(here, pattern=pattern, top_level_dir=here)
result = unittest.TextTestRunner(verbosity=2, resultclass=TimedResult).run(suite)
TimedResult.print_longest()
sys.exit(0 if result.wasSuccessful() else 1)
