"""The options every check shares, defined once: their word types (an editor
or mypy refuses a misspelt one before anything runs), their defaults, their
descriptions (the CLIs' --help reads them) and their validation, which
raises CheckError with one line per mistake. collgrad_torch's CheckOptions
and collgrad_jax's check build on these; nothing else spells them."""

import dataclasses
import math
from typing import Any, Dict, Literal, Tuple

from .errors import CheckError

# how a rank's gradient is judged: per-rank (d sum_k L_k / d x_r), replicated
# (d L_0 / d x_r), or "auto": per-rank, naming a result right only replicated
Semantics = Literal["auto", "per_rank", "replicated"]
# finite differences per element, along one random direction per tensor, or
# per element up to fd_budget input elements and "fast" beyond
FdMode = Literal["auto", "element", "fast"]
# what the global loss is: the sum of the ranks' losses or their mean (DDP's)
Reduction = Literal["sum", "mean"]

WORDS: Dict[str, Tuple[str, ...]] = {"semantics": ("auto", "per_rank", "replicated"),
                                     "fd": ("auto", "element", "fast"), "reduction": ("sum", "mean")}
DEFAULT_ATOL = 1e-5   # torch.autograd.gradcheck's, on float64
DEFAULT_RTOL = 1e-3
SEED_LIMIT = 1 << 32  # the ranks seed torch with seed * 7919 + rank and seed * 1000003 + i: int64 holds them


def option(default: Any, help: str, **meta: Any) -> Any:
    """A dataclass field with what a command line and the pytest marker need
    to know of it: help (its --help line, the default added), and in meta:
    cli (False: no flag; or argparse keywords), marker (False: the pytest
    marker does not take it), shrink (False: a shrink does not carry it)."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("a mutable default: use a tuple")
    return dataclasses.field(default=default, metadata=dict(meta, help=help))


def help_line(f: "dataclasses.Field[Any]") -> str:
    """The field's --help line, saying its default where it has one worth saying."""
    text = f.metadata["help"]
    if f.default is None or f.default is False or f.default == () or "default" in text:  # not 0 == False
        return text
    d = f.default
    return f"{text} (default {d:g})" if isinstance(d, float) else f"{text} (default {d})"


def _real(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def refuse(**given: Any) -> None:
    """The shared options' values checked, each by its own rule (only those given)."""
    for name, words in WORDS.items():
        if name in given and given[name] not in words:
            listed = ", ".join(f"'{w}'" for w in words[:-1]) + f" or '{words[-1]}'"
            raise CheckError(f"{name} must be {listed}, got {given[name]!r}")
    for name in ("atol", "rtol"):  # nan or < 0 would fail right gradients, inf pass all
        tol = given.get(name)
        if tol is not None and not (_real(tol) and 0 <= tol < math.inf):
            raise CheckError(f"{name} must be a finite number >= 0, got {tol!r}")
    if "fd_budget" in given and not (_int(given["fd_budget"]) and given["fd_budget"] >= 0):
        raise CheckError("fd_budget must be an integer >= 0 (input elements checked one by one), "
                         f"got {given['fd_budget']!r}")
    if "seed" in given and not (_int(given["seed"]) and 0 <= given["seed"] < SEED_LIMIT):
        raise CheckError(f"seed must be an integer in 0..{SEED_LIMIT - 1}, got {given['seed']!r}")
    if "timeout" in given and not (_real(given["timeout"]) and given["timeout"] > 0):
        raise CheckError(f"timeout must be a positive number of seconds, got {given['timeout']!r}")
    label = given.get("name")
    if label is not None and not (isinstance(label, str) and label):
        raise CheckError(f"name must be a non-empty string (the case's name in the reports), got {label!r}")
