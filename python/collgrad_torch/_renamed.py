"""The module names of collgrad_torch 0.1, before the package was split into
its two products (checker/: the user-code check; runner/: the C tool's
case-IR runner), and of 0.2's modules that moved to collgrad_core (the
framework-free core both checks stand on: the result, judge words, patterns,
finite differences' error, reports, the case IR). An import of an old name still works in this release and
warns (DeprecationWarning) with the new one; the next release drops them.

One finder on sys.meta_path answers only for the old names; the module it
returns IS the new module (the same object), so state, classes and
isinstance checks are shared."""

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Optional, Sequence

_RUNNER = ("ir", "interp", "ops", "comm", "rank", "api_c10d", "api_diffdist", "api_funcol", "api_gatherlayer",
           "api_listassign", "api_nn", "api_rpc", "apis", "results", "rng", "rpc_job", "scalar_ops")

# collgrad_torch 0.2's modules that are collgrad_core's now
_CORE = {**{f"collgrad_torch.checker.{m}": f"collgrad_core.{m}" for m in
            ("errors", "result", "fd_error", "patterns", "refs", "cli_words", "interrupt", "stacks", "report",
             "options")},
         **{f"collgrad_torch.runner.{m}": f"collgrad_core.{m}" for m in ("ir", "scalar_ops", "rng", "result_files")},
         "collgrad_torch.exit_class": "collgrad_core.exit_class"}
# (collgrad_torch.checker.pytest_plugin is a module of its own, naming the plugin: pluggy takes one
# module under one name only, so an alias of collgrad_core.pytest_plugin beside its entry point fails)


def _split_name(old: str) -> Optional[str]:
    """The 0.2 name of old, a collgrad_torch 0.1 module name, or None."""
    prefix = "collgrad_torch."
    if not old.startswith(prefix):
        return None
    rest = old[len(prefix):]
    if rest == "usercode" or rest.startswith("usercode."):
        return "collgrad_torch.checker" + rest[len("usercode"):]
    if rest == "pytest_plugin":
        return "collgrad_torch.checker.pytest_plugin"
    if rest in _RUNNER:
        return "collgrad_torch.runner." + rest
    return None


def new_name(old: str) -> Optional[str]:
    """The module that old (a module name of collgrad_torch 0.1 or 0.2) is now, or None."""
    if old in _CORE:
        return _CORE[old]
    split = _split_name(old)
    return None if split is None else _CORE.get(split, split)


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str):
        self.new = new
        self.spec: Optional[importlib.machinery.ModuleSpec] = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self.spec  # the import system set the old name's: the module keeps its own


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Optional[Sequence[str]],
                  target: Optional[types.ModuleType] = None) -> Optional[importlib.machinery.ModuleSpec]:
        new = new_name(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} is {new} now; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        package = new in ("collgrad_torch.checker", "collgrad_torch.runner")
        return importlib.machinery.ModuleSpec(fullname, _Alias(new), is_package=package)


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())  # before the path finder, which would load a second copy
