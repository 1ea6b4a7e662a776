"""The package's type hints, checked (ctest: python_types): mypy over the
user-code check (its public API and everything under it, every function
annotated) and the package's entry points. Exit 77 (skipped) without mypy."""

import os
import sys

try:
    from mypy import api
except ImportError:
    print(f"skipped: {sys.executable} has no mypy (Debian: apt-get install mypy)")
    sys.exit(77)

if os.environ.get("ASAN_OPTIONS"):
    print("skipped: the sanitizer build; type hints do not change with it")
    sys.exit(77)
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
os.chdir(root)
out, err, status = api.run(["--config-file", "pyproject.toml", "--disallow-untyped-defs",
                            "--cache-dir", os.path.join(os.environ.get("TMPDIR", "/tmp"), "collgrad-mypy-cache"),
                            "-p", "collgrad_torch.usercode", "-m", "collgrad_torch", "-m", "collgrad_torch.pytest_plugin"])
sys.stdout.write(out)
sys.stderr.write(err)
sys.exit(status)
