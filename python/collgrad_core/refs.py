"""Naming the user's functions so a fresh rank process can import them.

The ranks are new interpreters (one per rank, started by world.py), so a
function reaches them by reference, never by pickling: "MODULE:QUALNAME"
(imported with importlib, as pytest or a script would) or "FILE.py:QUALNAME"
(the file run as a module of its own name, so its `if __name__ ==
"__main__":` block does not run again on every rank).
"""

import hashlib
import importlib
import importlib.util
import os
import sys
from typing import Any, Callable, Union


class RefError(Exception):
    """The function cannot be named or found (bad usage: exit 2)."""


def ref_of(fn: Union[str, Callable[..., Any]], what: str) -> str:
    """The reference a rank resolves back to `fn`."""
    if isinstance(fn, str):
        if ":" not in fn or fn.endswith(":") or fn.startswith(":"):
            raise RefError(f"{what}: expected FILE.py:NAME or MODULE:NAME, got '{fn}'")
        return fn
    if not callable(fn):
        raise RefError(f"{what}: expected a function, got {type(fn).__name__}")
    qual = getattr(fn, "__qualname__", "")
    mod = getattr(fn, "__module__", None)
    if not qual or "<lambda>" in qual or "<locals>" in qual or not mod:
        raise RefError(f"{what}: {qual or fn!r} is not a module-level function; the ranks are fresh "
                       "processes that import it by name (define it at the top level of a module or file)")
    if mod == "__main__":
        main_file = getattr(sys.modules.get("__main__"), "__file__", None)
        if not main_file:
            raise RefError(f"{what}: {qual} lives in an interactive __main__, which the ranks cannot "
                           "import; put it in a file and pass FILE.py:NAME")
        return f"{os.path.abspath(main_file)}:{qual}"
    return f"{mod}:{qual}"


def absolute(ref: str) -> str:
    """FILE.py:NAME with FILE made absolute (from this process's directory),
    so a rank started elsewhere, or a warm one started before a chdir, finds
    the same file; MODULE:NAME as it is."""
    where, _, name = ref.rpartition(":")
    return f"{os.path.abspath(where)}:{name}" if where.endswith(".py") else ref


def _module_of_file(path: str) -> Any:
    # one module per file, named by its path too: a warm rank imports files of one
    # basename from several directories (pytest's tests/a/test_x.py, tests/b/test_x.py)
    path = os.path.abspath(path)
    digest = hashlib.sha1(path.encode()).hexdigest()[:8]
    name = f"collgrad_user_{os.path.splitext(os.path.basename(path))[0].replace('-', '_')}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RefError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its own imports, as when run
    spec.loader.exec_module(module)
    return module


def resolve(ref: str) -> Callable[..., Any]:
    """The function a reference names. Whatever importing the user's module
    raises propagates (the rank reports it with its traceback)."""
    where, qual = ref.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise RefError(f"{where}: no such file")
        obj: Any = _module_of_file(where)
    else:
        obj = importlib.import_module(where)
    for part in qual.split("."):
        if not hasattr(obj, part):
            raise RefError(f"{ref}: {where} has no '{qual}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise RefError(f"{ref}: not callable")
    return obj
