"""The check's options that take one of a few words, as types: an editor or
mypy refuses a misspelt one before anything runs (check() still refuses it at
run time, exit 2, for callers without a type checker)."""

from typing import Literal

# how a rank's gradient is judged: per-rank (d sum_k L_k / d x_r), replicated
# (d L_0 / d x_r), or "auto": per-rank, naming a result right only replicated
Semantics = Literal["auto", "per_rank", "replicated"]
# finite differences per element, along one random direction per tensor, or
# per element up to fd_budget input elements and "fast" beyond
FdMode = Literal["auto", "element", "fast"]
# what the global loss is: the sum of the ranks' losses or their mean (DDP's)
Reduction = Literal["sum", "mean"]
