"""A user's file that imports an installed package inside a function (as the frameworks' examples
import theirs): test_usercode_preload checks that spawn.py imported it before forking the ranks."""

import os
import sys

import torch


def make_inputs(rank, world):  # type: ignore[no-untyped-def]
    seen = "yaml" in sys.modules
    from yaml import safe_load

    with open(os.path.join(os.environ["COLLGRAD_TEST_MARK"], f"rank{rank}"), "w") as f:
        f.write("yaml was imported" if seen else "yaml was not imported")
    return {"x": torch.full((2,), float(safe_load("1.5")), dtype=torch.float64, requires_grad=True)}


def loss(rank, world, x):  # type: ignore[no-untyped-def]
    return (x * x).sum() * (rank + 1)
