"""The W ranks of one launch of the C tool's PyTorch backend, forked from one
process that imported torch first:

    python -m collgrad_torch.runner.zygote --world W --files PREFIX --exits PATH -- RANK_ARGS...

harness/pytorch/pytorch_env.c starts this (its supervisor's one child, with
the launch's environment); rank r is `python -m collgrad_torch.runner.rank
RANK_ARGS --results PREFIX.results.r --status ... ` as it was when each rank
was an interpreter of its own, but its start costs a fork, not an interpreter
and torch's import (2-4 s of CPU a rank, which W ranks on a few cores paid W
times over). Files, for rank r: PREFIX with "{kind}" replaced by results,
status and log, then r appended. Each rank's end is a line "RANK STATUS"
appended to the exits file as it happens (STATUS its exit status, or minus
the signal that killed it): the tool tells a dead rank from a waiting one.

Nothing here touches CUDA or starts a thread before the forks. Where torch
cannot be imported here, each rank imports it again and says why in its
results, as before."""

import os
import sys
import traceback
from typing import Dict, List, NoReturn

from collgrad_core.exit_class import ExitClass


def _preload() -> None:
    try:
        import torch  # noqa: F401
        import torch.distributed  # noqa: F401

        from . import apis, comm, ops, rank  # noqa: F401
    except Exception:   # the rank's own import says what is wrong (runner/rank.py: "cannot import torch")
        pass


def _file(prefix: str, kind: str, rank: int) -> str:
    return prefix.replace("{kind}", kind) + str(rank)


def _rank(rank: int, prefix: str, args: List[str]) -> NoReturn:
    """The forked child: its output in its log (rank 0's log also holds what
    this process printed before), stdin empty, then rank.main; never returns."""
    code = 1
    try:
        log = os.open(_file(prefix, "log", rank), os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if rank else 0),
                      0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
        from . import rank as rank_main

        argv = args + ["--results", _file(prefix, "results", rank), "--status", _file(prefix, "status", rank)]
        sys.argv = [rank_main.__file__] + argv
        code = rank_main.main(argv)
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


def main(argv: List[str]) -> int:
    if "--" not in argv or len(argv[:argv.index("--")]) != 6:
        print("usage: python -m collgrad_torch.runner.zygote --world W --files PREFIX --exits PATH -- RANK_ARGS...",
              file=sys.stderr)
        return ExitClass.USAGE
    head, args = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    opts = dict(zip(head[::2], head[1::2]))
    world, prefix = int(opts["--world"]), opts["--files"]
    _preload()
    ranks: Dict[int, int] = {}   # pid -> rank, while it runs
    with open(opts["--exits"], "a", encoding="ascii") as exits:
        for r in range(world):
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                pid = os.fork()
            except OSError as e:
                print(f"collgrad-check: cannot start rank {r}: {e}", file=sys.stderr, flush=True)
                exits.write(f"{r} 127\n")
                exits.flush()
                continue
            if pid == 0:
                _rank(r, prefix, args)
            ranks[pid] = r
        while ranks:   # in the order they end, not rank order: a dead rank is news at once
            pid, status = os.wait()
            if pid in ranks:
                exits.write(f"{ranks.pop(pid)} {os.waitstatus_to_exitcode(status)}\n")
                exits.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
