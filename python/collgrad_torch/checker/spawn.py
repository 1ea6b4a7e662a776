"""Start the W ranks and wait for them:

    python -m collgrad_torch.checker.spawn SPEC            one check (world.py)
    python -m collgrad_torch.checker.spawn --serve DIR W   a warm world (warm.py)

world.py runs this one process (inside a private network namespace when it
can), so the ranks share that namespace's loopback; the parent watches the
ranks' files and ends the whole process group when it decides, so this waits
and nothing more. Each rank's output goes to rank{R}.log in the check's
directory (the warm world's own directory when serving), and when its process
ends, its exit code to rank{R}.exit there (negative: the signal that killed
it), so a rank that dies without a word is named at once. The ranks' TMPDIR is
tmp/ inside that directory, which its owner removes: what a rank leaves in
its temporary directory (torch 1.13's torch.distributed.nn writes a
_remote_module_non_scriptable.py there on import and removes it only at a
clean exit, never after the SIGKILL that ends a rank) goes with it."""

import json
import os
import subprocess
import sys
from typing import Dict, List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[0] == "--serve":
        log_dir, world = argv[1], int(argv[2])
        worker_args = ["--serve", log_dir]
    else:
        with open(argv[0], encoding="utf-8") as f:
            spec = json.load(f)
        log_dir, world = spec["dir"], spec["world"]
        worker_args = [argv[0]]
    ranks: Dict[int, int] = {}  # pid -> rank, while it runs
    tmp = os.path.join(log_dir, "tmp")
    os.makedirs(tmp, exist_ok=True)
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), TMPDIR=tmp)
        with open(os.path.join(log_dir, f"rank{rank}.log"), "wb") as log:
            p = subprocess.Popen([sys.executable, "-m", "collgrad_torch.checker.worker"] + worker_args
                                 + [str(rank)], env=env, stdout=log, stderr=subprocess.STDOUT)
        ranks[p.pid] = rank
    worst = 0
    while ranks:  # each rank's end as it happens: the parent tells a death from a wait (world.py)
        pid, status = os.wait()
        if pid not in ranks:
            continue
        rank = ranks.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        tmp = os.path.join(log_dir, f".rank{rank}.exit")
        with open(tmp, "w", encoding="ascii") as f:
            f.write(f"{code}\n")
        os.replace(tmp, os.path.join(log_dir, f"rank{rank}.exit"))
        worst = max(worst, code if code >= 0 else 128 - code)
    return worst


if __name__ == "__main__":
    sys.exit(main())
