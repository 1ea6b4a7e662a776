"""The package's type hints, checked (ctest: python_types): mypy over the
user-code check (its public API and everything under it, every function
annotated) and the package's entry points; then what a user's editor sees:
reveal_type(collgrad_torch.check) is check()'s signature (keyword-only after
fn, the word options as Literal types), not Any. Exit 77 (skipped) without
mypy."""

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
                            "-p", "collgrad_core", "-p", "collgrad_torch.checker", "-m", "collgrad_torch"])
sys.stdout.write(out)
sys.stderr.write(err)
if status != 0:
    sys.exit(status)

# a user's module: collgrad_torch's lazily loaded names have their real types
user = ("import collgrad_torch as cg\n"
        "reveal_type(cg.check)\n"
        "reveal_type(cg.Result)\n"
        "cg.check(lambda rank, world: 0.0, world=2, semantics='per_rank', fd='fast')\n")
out, err, status = api.run(["--config-file", "pyproject.toml", "--cache-dir",
                            os.path.join(os.environ.get("TMPDIR", "/tmp"), "collgrad-mypy-cache"), "-c", user])
first = out.splitlines()[0] if out else ""  # reveal_type(cg.check); spelt as this mypy spells types
want = ["Revealed type is \"def (fn: ", ", *, world: Union[builtins.int, builtins.str] =", "semantics: ", "'per_rank'", "'replicated'",
        "fd: ", "'element'", "'fast'", "reduction: ", "'mean'", ".result.Result\""]
missing = [w for w in want if w not in first]
print(out, end="")
# a misspelt option is a type error
out2, _, status2 = api.run(["--config-file", "pyproject.toml", "--cache-dir",
                            os.path.join(os.environ.get("TMPDIR", "/tmp"), "collgrad-mypy-cache"),
                            "-c", "import collgrad_torch as cg\ncg.check('m.py:f', world=2, fd='elementwise')\n"])
if missing or status2 == 0 or "fd" not in out2:
    print("FAIL: reveal_type(collgrad_torch.check) lacks " + "; ".join(missing) if missing else
          "FAIL: a misspelt fd= passed mypy: " + out2)
    sys.exit(1)
print("check()'s signature reaches the user's editor; a misspelt option is refused")
