"""`python -m collgrad_torch.usercode.spawn SPEC`: start the W ranks of one check
and wait for them. world.py runs this one process (inside a private network
namespace when it can), so the ranks share that namespace's loopback; the
parent watches the ranks' files and ends the whole process group when it
decides, so this waits and nothing more."""

import json
import os
import subprocess
import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    procs = []
    for rank in range(spec["world"]):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(spec["world"]), LOCAL_RANK=str(rank))
        with open(os.path.join(spec["dir"], f"rank{rank}.log"), "wb") as log:
            procs.append(subprocess.Popen([sys.executable, "-m", "collgrad_torch.usercode.worker", argv[0],
                                           str(rank)], env=env, stdout=log, stderr=subprocess.STDOUT))
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())
