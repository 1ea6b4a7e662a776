#!/usr/bin/env python3
"""What the check says of examples/user_code/parallel/ under the torch at hand, measured.

    PYTHON tests/torch/probe_zoo.py

One line per example function and world size (run it inside `unshare -n` with lo up
when root; PYTHONPATH=python for the tree's collgrad_torch):

    torch VERSION MODULE:FUNCTION W=N: pass|fail|error [pattern keys] [the error's first line]

The lines are what tests/torch/findings-zoo.txt records for each torch version; which
verdicts are right is python/tests/usercode_parallel.py's business (single-process
references), not this script's.
"""

import os
import sys
from typing import Any, Dict, List, Tuple

import torch

import collgrad_torch as cg
from collgrad_core import patterns

PARALLEL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "examples", "user_code", "parallel")
STEP = {"step": True}
MEAN = {"step": True, "reduction": "mean"}
REPLICATED = {"semantics": "replicated"}
# (module, function, check() arguments, world sizes)
ZOO: List[Tuple[str, str, Dict[str, Any], Tuple[int, ...]]] = [
    ("tp_mlp", "mlp", REPLICATED, (2, 4)),
    ("tp_mlp", "mlp_bias_partial", REPLICATED, (2, 4)),
    ("row_parallel", "row_parallel", REPLICATED, (2, 4)),
    ("sp_norm", "norm_partial", {}, (2, 4)),
    ("sp_norm", "norm_local", {}, (2, 4)),
    ("loss_parallel", "step", STEP, (2, 4)),
    ("loss_parallel", "step_scaled", STEP, (2, 4)),
    ("fsdp_step", "step", MEAN, (2, 4)),
    ("fsdp_step", "step_sum", MEAN, (2, 4)),
    ("hsdp_step", "step", MEAN, (4,)),
    ("hsdp_step", "step_sum", MEAN, (4,)),
    ("fsdp_tp_step", "step", MEAN, (4,)),
    ("fsdp_tp_step", "step_bias_twice", MEAN, (4,)),
    ("moe_ep", "step", STEP, (2, 4)),
    ("moe_ep", "step_expert_scaled", STEP, (2, 4)),
    ("pipeline", "step", STEP, (2, 4)),
    ("pipeline", "step", dict(STEP, inputs="make_inputs_unscaled"), (2, 4)),
    ("ring_attention", "ring", {}, (2, 4)),
    ("ring_attention", "ring_grad_wrong_way", {}, (2, 4)),
    ("checkpointed_tp", "checkpointed", REPLICATED, (2, 4)),
    ("checkpointed_tp", "checkpointed_reentrant", REPLICATED, (2, 4)),
]


def probe(module: str, fn: str, args: Dict[str, Any], world: int) -> str:
    args = dict(args)
    path = os.path.join(PARALLEL, f"{module}.py")
    inputs = args.pop("inputs", "make_inputs")
    target = {"step": f"{path}:{fn}"} if args.pop("step", False) else {"fn": f"{path}:{fn}"}
    r = cg.check(**target, world=world, inputs=f"{path}:{inputs}", timeout=120, **args)  # type: ignore[arg-type]
    if r.error is not None:
        return f"error {r.error.splitlines()[0][:200]}"
    keys = sorted({patterns.key(p) for c in r.checks if not c.ok for p in c.patterns})
    return r.status + (f" {' '.join(keys)}" if keys else "")


def main() -> int:
    with cg.warm_worlds():
        for module, fn, args, worlds in ZOO:
            name = fn if args.get("inputs") is None else f"{fn} ({args['inputs']})"
            for world in worlds:
                print(f"torch {torch.__version__} {module}:{name} W={world}: {probe(module, fn, args, world)}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
