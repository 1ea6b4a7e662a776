"""Collective kinds that an API carries out as calls of other kinds.

Every API (api_*.py) has a method per built-in kind. A kind none of them has
a method for is one module: in this folder, or a file named by
``COLLGRAD_KINDS`` (paths with ``os.pathsep`` between them: a kind from outside
the tree, as ``tests/toy_kind``'s). The module says its ``NAME``, the case
language's word (its C file's ``CG_KIND_WORDS``), ``USES``, the kinds it is
made of (an API that lacks one refuses it, as it refuses them), and
``run(api, call, x)``, which calls the API's methods of those kinds on the
sub-calls ``step`` makes, so autograd sees exactly what that API gives them.
"""

import dataclasses
import importlib
import importlib.util
import os
import pkgutil
from types import ModuleType
from typing import Callable, Dict, List, Optional, Sequence

import torch

from ..comm import Api, Call, Unsupported

ENV = "COLLGRAD_KINDS"

_modules: Optional[Dict[str, ModuleType]] = None


class KindError(RuntimeError):
    """A kind's module that cannot be used: unreadable, or without NAME, USES or run."""


def _check(module: ModuleType, where: str) -> ModuleType:
    uses = getattr(module, "USES", None)
    if (not isinstance(getattr(module, "NAME", None), str) or not callable(getattr(module, "run", None))
            or not isinstance(uses, tuple) or not all(isinstance(u, str) for u in uses)):
        raise KindError(f"{where}: a kind's module defines NAME (its word), USES (a tuple of the kinds "
                        f"it is made of) and run(api, call, x)")
    return module


def _load_file(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"collgrad_kind_{len(path)}_{abs(hash(path))}", path)
    if spec is None or spec.loader is None or not os.path.isfile(path):
        raise KindError(f"{ENV}: {path}: no such Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's file: whatever it raises is its own error, named by its path
        raise KindError(f"{ENV}: {path}: {type(e).__name__}: {e}") from e
    return _check(module, f"{ENV}: {path}")


def modules() -> Dict[str, ModuleType]:
    """Every kind module, by NAME: this folder's, then COLLGRAD_KINDS' files."""
    global _modules
    if _modules is None:
        found: Dict[str, ModuleType] = {}
        for info in pkgutil.iter_modules(__path__):
            m = _check(importlib.import_module(f"{__name__}.{info.name}"), info.name)
            found[m.NAME] = m
        for path in filter(None, os.environ.get(ENV, "").split(os.pathsep)):
            m = _load_file(os.path.abspath(path))
            found[m.NAME] = m
        _modules = found
    return _modules


def expand(names: Sequence[str]) -> List[str]:
    """`names` with each composed kind replaced by the kinds it uses: what an
    API must have to run them (Api.unsupported)."""
    table = modules()
    return [u for k in names for u in (table[k].USES if k in table else (k,))]


def method(api: Api, kind: str) -> Callable[[Call, torch.Tensor], torch.Tensor]:
    """What carries `kind` out on `api`: its own method, else the kind's module."""
    own = getattr(api, kind, None)
    if own is not None:
        return own
    module = modules().get(kind)
    if module is None:
        raise Unsupported(f"{kind}: pytorch:{api.name} has no method for it and no kind module says it "
                          f"(collgrad_torch/runner/kinds, {ENV})")
    return lambda call, x: module.run(api, call, x)


def step(call: Call, kind: str, *, op: str = "sum", root: int = 0) -> Call:
    """`call` as a call of `kind` on the same ranks and shapes, a step of a
    composed kind: `root` counts in the call's group, as the call's does."""
    members = call.event.members
    return dataclasses.replace(call, kind=kind, op=op, root=root, src=members[root] if members else root,
                               event=dataclasses.replace(call.event, kind=kind))
