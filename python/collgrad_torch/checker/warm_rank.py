"""A warm world's rank: `python -m collgrad_torch.checker.worker --serve DIR
RANK` (warm.py starts W of them) runs check after check in the same process,
each in a fresh process group and as in a fresh process (fresh.py)."""

import faulthandler
import os
import signal
import sys
import time
from typing import Callable


def _owner_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def serve(pool_dir: str, rank: int, one_check: Callable[[str, int, bool], int]) -> int:
    """A warm world's rank (warm.py): run check after check with one_check
    (worker.py's), each named by the file job.N (N = 1, 2, ...) that holds its
    spec's path, in a fresh process group and as in a fresh process (fresh.py). Ends after a check
    that failed (the owner replaces the whole world), when the owner's
    process is gone, or its directory is."""
    with open(os.path.join(pool_dir, "owner"), encoding="ascii") as f:
        owner = int(f.read().strip())
    stack = open(os.path.join(pool_dir, f"rank{rank}.stack"), "w", encoding="utf-8")
    faulthandler.register(signal.SIGUSR1, file=stack, all_threads=True)
    from . import fresh

    fresh.import_group_defaults()  # before any group: their defaults then follow the current one
    seq = 1
    last_look = time.monotonic()
    while True:
        job = os.path.join(pool_dir, f"job.{seq}")
        try:
            with open(job, encoding="utf-8") as f:
                spec_path = f.read().strip()
        except FileNotFoundError:
            time.sleep(0.005)
            if time.monotonic() - last_look > 1.0:
                last_look = time.monotonic()
                if not os.path.isdir(pool_dir) or not _owner_alive(owner):
                    if rank == 0:  # an owner killed outright could not remove it
                        import shutil

                        shutil.rmtree(pool_dir, ignore_errors=True)
                    return 0
            continue
        before = fresh.Fresh()
        code = one_check(spec_path, rank, True)  # serving
        before.restore()  # the next check imports the user's code again, in its own group
        sys.stdout.flush()
        sys.stderr.flush()
        if code != 0:
            return code
        seq += 1
        last_look = time.monotonic()
