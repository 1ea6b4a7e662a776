"""The package's unit tests: the files matching the pattern given as the
argument (default test*.py; ctest: python_collgrad_torch runs test_[!u]*.py,
python_usercode_units test_usercode*.py, python_usercode_examples
usercode_examples.py, the slow end-to-end one).
Exit 77, which ctest shows as skipped, when this interpreter has no torch;
COLLGRAD_CHECK names the built collgrad-check, which exports the cases the
tests run."""

import importlib.util
import os
import shutil
import sys
import unittest

if importlib.util.find_spec("torch") is None:
    print(f"skipped: {sys.executable} has no torch (Debian: apt-get install python3-torch; "
          "torch 2.x: scripts/torch2-venv.sh)")
    sys.exit(77)
here = os.path.dirname(os.path.abspath(__file__))
TORCH2_TESTS = ("usercode_torch2.py", "usercode_parallel.py", "usercode_launched.py")  # run with torch 2.x (tests/CMakeLists.txt)
sys.path.insert(0, os.path.dirname(here))
from tests.timed import TimedResult  # noqa: E402
pattern = sys.argv[1] if len(sys.argv) > 1 else "test*.py"
# tests whose launchers (torchrun's rendezvous, mpiexec's ranks) bind fixed loopback ports: as root,
# all of them in one private network namespace of their own, where no other test's ports are
NETNS_TESTS = ("usercode_launched.py",)
if (pattern in NETNS_TESTS and os.geteuid() == 0 and not os.environ.get("COLLGRAD_TEST_NETNS")
        and shutil.which("unshare") and shutil.which("ip")):
    os.environ["COLLGRAD_TEST_NETNS"] = "1"
    os.execvp("unshare", ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', sys.executable]
              + sys.argv)
if os.environ.get("ASAN_OPTIONS"):
    # the sanitizer suite (scripts/sanitize.sh) checks C code; the user-code check runs
    # none, and its process-starting tests would only spend CI's time twice
    if len(sys.argv) > 1 and not sys.argv[1].startswith("test_[!u]"):
        print("skipped: the sanitizer build; this test runs no C code")
        sys.exit(77)
    pattern = "test_[!u]*.py"

suite = unittest.defaultTestLoader.discover(here, pattern=pattern, top_level_dir=os.path.dirname(here))
result = unittest.TextTestRunner(verbosity=2, resultclass=TimedResult).run(suite)
TimedResult.print_longest()
if pattern in TORCH2_TESTS and os.environ.get("CG_REQUIRE_TORCH2") == "1" and result.skipped:
    # CI: the torch 2.x tests must run there (.ci/run), a skip is a failure
    print(f"CG_REQUIRE_TORCH2=1: {len(result.skipped)} torch 2.x test(s) skipped: "
          + "; ".join(f"{t.id()}: {why}" for t, why in result.skipped))
    sys.exit(1)
sys.exit(0 if result.wasSuccessful() else 1)
