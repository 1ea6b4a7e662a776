"""A training script's way into the launched check (usercode_launched.py runs it
under torchrun): form the process group as the script would, then check each
step given on the command line on that group, world="launched". Rank 0 writes
every Result's verdicts (summary()) as JSON to the first argument; every rank
exits with the checks' exit status.

    torchrun ... driver.py OUT.json FILE.py:step [FILE.py:step ...]
"""

import json
import sys
from typing import Any, Dict, List

import torch.distributed as dist

import collgrad_torch as cg
from collgrad_core import cli_words


def summary(r: cg.Result) -> Dict[str, Any]:
    """What two checks of the same code must agree on: the verdict, and per
    rank and tensor whether it is right, replicated over what, and its patterns."""
    return {"status": r.status, "error": r.error, "semantics": r.semantics,
            "checks": sorted([c.rank, c.tensor, c.ok, c.replicated, c.over, list(c.patterns)] for c in r.checks)}


def main(argv: List[str]) -> int:
    out, steps = argv[0], argv[1:]
    dist.init_process_group("gloo")
    results = []
    for step in steps:
        inputs = step.rsplit(":", 1)[0] + ":make_inputs"
        results.append(cg.check(step=step, inputs=inputs, world="launched", reduction="mean", timeout=120))
    if dist.get_rank() == 0:
        with open(out, "w", encoding="utf-8") as f:
            json.dump([summary(r) for r in results], f)
    return int(cli_words.exit_status(results))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
