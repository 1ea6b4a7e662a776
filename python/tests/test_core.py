"""collgrad_core is the checks' common ground and holds no framework, and the
two framework packages stand on it without leaning on each other (issue 63
item 2): every import statement of the three packages is read (the module's
whole tree, imports inside functions included), and importing collgrad_core
is watched for what it loads."""

import ast
import os
import subprocess
import sys
import unittest
from typing import Dict, List, Set

PYTHON = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRAMEWORKS = {"torch", "jax", "jaxlib", "numpy", "collgrad_torch", "collgrad_jax"}


def imports(package: str) -> Dict[str, Set[str]]:
    """file (relative to python/) -> the top-level names it imports, relative imports resolved."""
    out: Dict[str, Set[str]] = {}
    for folder, _, files in os.walk(os.path.join(PYTHON, package)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            found: Set[str] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom):
                    found.add(package if node.level else (node.module or "").split(".")[0])
            out[os.path.relpath(path, PYTHON)] = found
    return out


def offenders(package: str, forbidden: Set[str]) -> List[str]:
    return [f"{path} imports {', '.join(sorted(names & forbidden))}"
            for path, names in sorted(imports(package).items()) if names & forbidden]


class CoreStandsAlone(unittest.TestCase):
    def test_the_reader_sees_imports(self) -> None:
        # the test's own eyes: the torch package does import torch and the core, the JAX one jax
        torch_side = set().union(*imports("collgrad_torch").values())
        jax_side = set().union(*imports("collgrad_jax").values())
        self.assertTrue({"torch", "collgrad_core"} <= torch_side, torch_side)
        self.assertTrue({"jax", "collgrad_core"} <= jax_side, jax_side)

    def test_no_import_between_the_frameworks(self) -> None:
        self.assertEqual(offenders("collgrad_torch", {"collgrad_jax", "jax", "jaxlib"}), [])
        self.assertEqual(offenders("collgrad_jax", {"collgrad_torch", "torch"}), [])

    def test_the_core_imports_no_framework(self) -> None:
        # the pytest plugin alone reaches a framework, the one a marked test asks for, when it runs
        found = [line for line in offenders("collgrad_core", FRAMEWORKS)
                 if not line.startswith(os.path.join("collgrad_core", "pytest_plugin.py"))]
        self.assertEqual(found, [])

    def test_importing_the_core_loads_no_framework(self) -> None:
        modules = [m[:-3] for m in os.listdir(os.path.join(PYTHON, "collgrad_core"))
                   if m.endswith(".py") and m not in ("__init__.py", "pytest_plugin.py")]
        code = ("import sys\n" + "".join(f"import collgrad_core.{m}\n" for m in sorted(modules)) +
                f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(FRAMEWORKS)!r}))\n")
        env = dict(os.environ, PYTHONPATH=PYTHON)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "[]")


class OneWalk(unittest.TestCase):
    """The two interpreters of the case IR (PyTorch's ranks, JAX's shard_map)
    walk it with collgrad_core/walk.py and supply only their values and
    operations: neither spells the walk again."""

    WALK = {"run", "stmts", "call_stmt", "eval", "call", "arguments"}

    def classes(self, path: str) -> Dict[str, ast.ClassDef]:
        with open(os.path.join(PYTHON, path), encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        return {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}

    def test_both_interpreters_are_walks(self) -> None:
        for path, name in (("collgrad_torch/runner/interp.py", "Rank"), ("collgrad_jax/runner/program.py", "Program")):
            with self.subTest(interpreter=name):
                cls = self.classes(path)[name]
                self.assertEqual([ast.unparse(b) for b in cls.bases], ["Walk"])
                own = {f.name for f in cls.body if isinstance(f, ast.FunctionDef)}
                self.assertEqual(own & self.WALK, set(), f"{name} walks the IR itself")
                walk = {f.name for f in self.classes("collgrad_core/walk.py")["Walk"].body
                        if isinstance(f, ast.FunctionDef)}
                self.assertTrue(self.WALK <= walk)


if __name__ == "__main__":
    unittest.main()
