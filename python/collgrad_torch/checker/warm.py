"""Warm worlds: W rank processes started once and reused by check after check.

Starting a world costs each rank a Python start, a torch import and a group
to join: seconds, where the check itself often takes less. Inside

    with collgrad_torch.warm_worlds():
        check(f, world=4, ...)
        check(g, world=4, ...)      # the same 4 processes

one WarmWorld per (world size, backend, interpreter) serves every check
(worker.serve): each check gets its own private directory and store and a
fresh default process group, destroyed with every group the check made when
it ends, so one check's groups never reach the next. A check that fails to
run (a rank raised, died or hung) ends its whole world: its result says what
happened, and the next check starts a fresh one. Checks that merely find
wrong gradients keep it warm.

Who owns what: the Warm context owns its WarmWorlds and ends them (and their
processes) on exit; a WarmWorld owns its spawn.py process group and its
directory. The ranks also leave by themselves when their owner's process or
the directory is gone, so an owner killed outright leaves nothing running.
"""

import os
import shutil
import subprocess
import tempfile
from types import TracebackType
from typing import Any, Dict, List, Optional, Tuple, Type

from .world import World, WorldError, end
from .messages import RankResult

Key = Tuple[int, str, str]


class WarmWorld:
    """The ranks of one (world size, backend, interpreter), serving checks in turn."""

    def __init__(self, key: Key, tmpdir: Optional[str] = None):
        self.key, self.tmpdir = key, tmpdir
        self.proc: Optional["subprocess.Popen[bytes]"] = None
        self.dir = ""
        self.seq = 0
        self.starts = 0      # how many times its ranks were started (1 + replacements)
        self.checks = 0

    def _start(self, w: World) -> "subprocess.Popen[bytes]":
        self.close()
        self.dir = tempfile.mkdtemp(prefix="collgrad-warm-", dir=self.tmpdir)
        with open(os.path.join(self.dir, "owner"), "w", encoding="ascii") as f:
            f.write(str(os.getpid()))
        w.log_dir = self.dir
        proc = w.start(["--serve", self.dir, str(self.key[0])])
        self.proc, self.seq = proc, 0
        self.starts += 1
        return proc

    def run(self, w: World) -> List[RankResult]:
        """One check's rank results (as World.run), on these ranks."""
        if self.proc is None or self.proc.poll() is not None:
            proc = self._start(w)
        else:
            proc, w.warm = self.proc, True
        w.log_dir = self.dir
        self.checks += 1
        healthy = False
        try:
            w.write_spec()
            self.seq += 1
            tmp = os.path.join(self.dir, f".job.{self.seq}")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(w.spec_path)
            os.replace(tmp, os.path.join(self.dir, f"job.{self.seq}"))  # the ranks never see half a name
            w.watch(lambda: proc.poll() is None)
            healthy = proc.poll() is None and not w.failed()
            return w.collect(proc.returncode)
        finally:
            if not healthy:
                self.close()  # a failed, dead or hung world is replaced by the next check
            w.remove()

    def close(self) -> None:
        if self.proc is not None:
            end(self.proc)
            self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = ""


class Warm:
    """The context in which check() reuses warm worlds (warm_worlds())."""

    def __init__(self, tmpdir: Optional[str] = None) -> None:
        self.worlds: Dict[Key, WarmWorld] = {}
        self.tmpdir = tmpdir   # where the worlds' and checks' private directories go
        self._outer: Optional["Warm"] = None

    def run(self, w: World) -> List[RankResult]:
        key = (w.spec["world"], w.spec["backend"], w.python)
        if key not in self.worlds:
            self.worlds[key] = WarmWorld(key, self.tmpdir)
        return self.worlds[key].run(w)

    def starts(self) -> int:
        return sum(ww.starts for ww in self.worlds.values())

    def close(self) -> None:
        for ww in self.worlds.values():
            ww.close()

    def __enter__(self) -> "Warm":
        global _active
        self._outer, _active = _active, self
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        global _active
        self.close()
        _active = self._outer


_active: Optional[Warm] = None


def active() -> Optional[Warm]:
    return _active


def warm_worlds(tmpdir: Optional[str] = None) -> Warm:
    """A context manager: inside it, check() runs on warm worlds, started once
    per (world size, backend, interpreter) and ended when it exits. Their
    directories (and the checks' stores) go under `tmpdir` when given."""
    return Warm(tmpdir)


__all__ = ["Warm", "WarmWorld", "WorldError", "active", "warm_worlds"]
