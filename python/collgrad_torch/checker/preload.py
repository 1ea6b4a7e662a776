"""What spawn.py imports before it forks the ranks, beyond torch: the
installed packages the user's files import at their top (transformers,
megatron.core, torchtitan: 5-10 s of CPU a rank each), so a world of W ranks
imports them once, as a training script imports them before its DataLoader
forks its workers.

Only what is safe to share: packages installed in the interpreter's library
directories (never a module beside the user's file, whose import may make
process groups or read the rank), named by a static read of the files'
imports (the parent imports nothing of them), and only for CPU ranks (a package that
touches CUDA at import would leave the forked ranks a CUDA they cannot use).
A package whose import reads the rank's identity from the environment would
get the spawner's, not each rank's: preload() notices the read, and spawn.py
starts over without the packages (each rank then imports them itself)."""

import ast
import importlib
import importlib.util
import os
import sys
import sysconfig
from typing import Any, Iterable, List, Set

ENV = "COLLGRAD_PRELOAD"   # MODULE or MODULE:NAME, comma-separated, from the parent (world.py) to spawn.py
RANK_VARIABLES = ("RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK")   # each rank's own (spawn.py sets them)
_LIBRARIES = tuple(os.path.realpath(p) + os.sep for p in
                   {sysconfig.get_paths()[k] for k in ("purelib", "platlib")} | set(
                       p for p in sys.path if p.rstrip(os.sep).endswith(("site-packages", "dist-packages"))))


def _file_of(ref: str) -> str:
    where = ref.rsplit(":", 1)[0]
    if where.endswith(".py"):
        return where
    module = sys.modules.get(where)   # a module reference: the parent has it imported (refs.ref_of)
    return getattr(module, "__file__", None) or ""


def _imports(path: str) -> List[str]:
    """The absolute imports anywhere in a file, in order (frameworks' examples import
    them inside the functions that need them)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return []
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # MODULE:NAME, as `from MODULE import NAME` runs: the attribute too (transformers loads
            # its models lazily, on that getattr)
            names += [f"{node.module}:{a.name}" for a in node.names if a.name != "*"] or [node.module]
    return names


def _installed(name: str) -> bool:
    """Whether a top-level package lives in the interpreter's library directories
    (looked up without importing it)."""
    top = name.split(":")[0].split(".")[0]
    if top in sys.builtin_module_names or top in ("torch", "collgrad_torch"):
        return False   # spawn.py has these
    module = sys.modules.get(top)
    origin = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", [])), None)
    if module is None:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return False
        places = list(spec.submodule_search_locations or []) if spec else []   # a namespace package: megatron
        origin = spec.origin if spec and spec.has_location else (places[0] if places else None)
    return bool(origin) and os.path.realpath(str(origin)).startswith(_LIBRARIES)


def third_party(refs: Iterable[str], backend: str) -> List[str]:
    """The installed packages the files of `refs` import, for CPU ranks."""
    if backend != "gloo":
        return []
    seen: Set[str] = set()
    out: List[str] = []
    for ref in refs:
        path = _file_of(ref) if ref else ""
        for name in _imports(path) if path.endswith(".py") else []:
            if name not in seen and _installed(name):
                seen.add(name)
                out.append(name)
    return out


class _Watched(os._Environ):   # type: ignore[misc,name-defined]
    """os.environ that remembers whether a rank's identity was read."""

    read_rank = False

    def __getitem__(self, key: Any) -> Any:
        if key in RANK_VARIABLES:
            _Watched.read_rank = True
        return super().__getitem__(key)


def preload(names: List[str]) -> bool:
    """Import `names` (a failure is left to the rank, which imports it again and
    says why); False when one read the rank's identity: this process must not
    fork the ranks."""
    plain = os.environ.__class__
    os.environ.__class__ = _Watched
    try:
        for name in names:
            module, _, attr = name.partition(":")
            try:
                getattr(importlib.import_module(module), attr) if attr else importlib.import_module(module)
            except BaseException:   # noqa: B036  (SystemExit too: the rank's import will say it)
                pass
    finally:
        os.environ.__class__ = plain
    return not _Watched.read_rank
