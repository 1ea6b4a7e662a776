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
clean exit, never after the SIGKILL that ends a rank) goes with it.

The ranks are forked from this process once it has imported torch (as
torch's DataLoader forks its workers): a rank's start costs a fork, not an
interpreter and torch's import (3-4 s of CPU under torch 2.x), which a world
of W ranks on a few cores paid W times over; for CPU ranks, the installed
packages the user's files import too (preload.py). Nothing here touches CUDA
or starts a thread of its own before the forks, so each rank initialises its
device and its process group as a fresh process would."""

import json
import os
import sys
import tempfile
import traceback
from typing import Dict, List, NoReturn, Optional

from . import preload


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
    os.environ["TMPDIR"] = tmp   # what torch's import writes there goes with the check, as the ranks' does
    tempfile.tempdir = None
    _preload()
    packages = [n for n in os.environ.pop(preload.ENV, "").split(",") if n]
    os.environ["WORLD_SIZE"] = str(world)   # as each rank's: a package may read it at import
    if packages and not preload.preload(packages):   # one read the rank: each rank imports them itself
        os.execv(sys.executable, [sys.executable, "-m", "collgrad_torch.checker.spawn"] + argv)
    for rank in range(world):
        with open(os.path.join(log_dir, f"rank{rank}.log"), "wb") as log:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _rank(rank, world, log.fileno(), worker_args + [str(rank)])
        ranks[pid] = rank
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


def _preload() -> None:
    """What every rank imports before its check: torch (not CUDA: initialised by the rank that uses it)
    and the rank's own modules."""
    import torch  # noqa: F401
    import torch.distributed  # noqa: F401

    from collgrad_core import refs
    from . import cuda_on_cpu, warm_rank, worker  # noqa: F401
    try:
        import torch.distributed.tensor  # noqa: F401  (DTensor: most torch 2.x code's; 0.6 s a rank)
    except ImportError:   # torch before 2.4
        pass


def _rank(rank: int, world: int, log: int, args: List[str]) -> NoReturn:
    """The forked child: rank `rank` with its output in its log, as `python -m
    collgrad_torch.checker.worker ARGS` would run it; it never returns here."""
    code = 1
    try:
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
        from . import worker

        sys.argv = [worker.__file__] + args
        code = worker.main(args)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
