"""The W rank processes of one check: started in a private directory, watched,
and ended.

The parent (the user's process) writes the spec, starts spawn.py (the ranks'
parent, in a private network namespace with only loopback when run as root,
as the case-IR runner does) in a process group of its own, and watches the
ranks' files (worker.py): a rank's error file ends the world after a short
grace (the others usually wait for it in a collective), and a world where no
rank has moved on for `timeout` seconds is a hang: every rank dumps its Python
stacks (SIGUSR1, faulthandler), the stacks name the call each one waits in,
and the process group is killed. Nothing is left running. Until every rank
has joined the group and imported the user's code, the allowance is at least
STARTUP_S: a loaded machine's torch import is not a hang.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from collgrad_core.exit_class import ExitClass
from collgrad_core.result_files import read_or_none
from . import preload
from .messages import RankError, RankResult, Spec
from collgrad_core.stacks import waiting_call

STARTUP_S = 120.0        # importing torch and joining the group, W ranks on a loaded machine
STARTING = (None, "joining the process group", "importing the user's code")
RANK_BYTES = 400 << 20   # a rank that imports torch and runs small tensors: about 250-350 MB resident
ERROR_GRACE_S = 1.0


class WorldError(Exception):
    """The check could not complete: error_class ExitClass.USAGE (the user's
    code or inputs) or .INFRA (a rank died or hung, the group did not form)."""

    def __init__(self, message: str, error_class: int):
        super().__init__(message)
        self.error_class = error_class


def _mem_available() -> Optional[int]:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def refuse_world(world: int) -> None:
    """Before starting anything: a world this machine cannot hold."""
    if not isinstance(world, int) or world < 1:
        raise WorldError(f"world must be a positive integer, got {world!r}", ExitClass.USAGE)
    avail = _mem_available()
    if avail is not None and world * RANK_BYTES > avail:
        raise WorldError(f"world {world} needs about {world * RANK_BYTES >> 20} MiB for its ranks "
                         f"({RANK_BYTES >> 20} MiB each with torch loaded) and this machine has "
                         f"{avail >> 20} MiB available: refused before starting", ExitClass.USAGE)


def isolation() -> Tuple[List[str], str]:
    """The command prefix that gives the ranks a private loopback, and its description."""
    if os.environ.get("COLLGRAD_NETNS", "1") == "0":
        return [], "none (COLLGRAD_NETNS=0)"
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("unshare") and shutil.which("ip"):
        return (["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"'],
                "a private network namespace with only loopback (root: unshare -n)")
    return [], "loopback only (GLOO_SOCKET_IFNAME=lo, FileStore); not root, so no private namespace"


class World:
    """One check: its private directory (the spec, the store, every rank's
    files), the watch over its ranks, and what they left. The ranks come from
    a fresh spawn.py (run(), the default) or from a warm world that serves
    check after check (warm.py, which calls watch() and collect())."""

    def __init__(self, spec: Spec, timeout: float, python: Optional[str] = None,
                 parent_dir: Optional[str] = None):
        self.spec, self.timeout = spec, timeout
        self.python = python or sys.executable
        self.dir = tempfile.mkdtemp(prefix="collgrad-check-", dir=parent_dir)
        spec["dir"] = self.dir
        spec["store"] = os.path.join(self.dir, "store")
        spec["sys_path"] = list(sys.path)
        self.spec_path = os.path.join(self.dir, "spec.json")
        self.log_dir = self.dir   # the ranks' output and stacks: a warm world's own directory
        self.warm = False         # ranks already running: no start-up allowance
        self.prefix, self.isolation = isolation()

    def path(self, rank: int, suffix: str) -> str:
        return os.path.join(self.dir, f"rank{rank}.{suffix}")

    def write_spec(self) -> None:
        with open(self.spec_path, "w", encoding="utf-8") as f:
            json.dump(self.spec, f)

    def start(self, args: List[str]) -> "subprocess.Popen[bytes]":
        """spawn.py with `args`, in a process group of its own (and the private loopback)."""
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        paths = [here] + [p for p in sys.path if p and os.path.isdir(p)]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)),
                   GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")
        env.setdefault("OMP_NUM_THREADS", "1")  # W ranks on a few cores: no thread oversubscription
        refs = [str(self.spec.get(k) or "") for k in ("fn", "inputs", "setup", "teardown")]
        env[preload.ENV] = ",".join(preload.third_party(refs, self.spec.get("backend", "")))
        with open(os.path.join(self.log_dir, "spawn.log"), "wb") as log:  # the child keeps its own descriptor
            return subprocess.Popen(self.prefix + [self.python, "-m", "collgrad_torch.checker.spawn"] + args,
                                    env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def run(self) -> List[RankResult]:
        """A fresh world for this one check: every rank's result, or
        WorldError. Nothing is left running; the private directory is removed."""
        try:
            self.write_spec()
            proc = self.start([self.spec_path])
            try:
                self.watch(lambda: proc.poll() is None)
            finally:
                end(proc)
            return self.collect(proc.returncode)
        finally:
            self.remove()

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def watch(self, running: Callable[[], bool]) -> None:
        """Until every rank has finished, one has failed (after a short grace
        for the others' errors), or the ranks' process is gone; WorldError(INFRA)
        for a hang, with the call each rank waits in."""
        world = self.spec["world"]
        statuses: List[Optional[str]] = [None] * world
        moved = time.monotonic()
        first_error: Optional[float] = None
        while running():
            time.sleep(0.02)
            now = time.monotonic()
            for r in range(world):
                s = read_or_none(self.path(r, "status"))
                if s != statuses[r]:
                    statuses[r], moved = s, now
            if all(self._phase(st)[1] == "finished" for st in statuses):
                return
            if first_error is None and any(os.path.exists(self.path(r, "error.json")) or self.died(r) is not None
                                           for r in range(world)):
                first_error = now
            if first_error is not None and now - first_error > ERROR_GRACE_S:
                return
            starting = not self.warm and any(st is None or self._phase(st)[1] in STARTING for st in statuses)
            limit = max(self.timeout, STARTUP_S) if starting else self.timeout
            if now - moved > limit:
                raise WorldError(self._hang_message(statuses, limit), ExitClass.INFRA)

    def failed(self) -> bool:
        return any(os.path.exists(self.path(r, "error.json")) or self.died(r) is not None
                   for r in range(self.spec["world"]))

    def died(self, r: int) -> Optional[str]:
        """How rank r's process ended (spawn.py's rank{R}.exit) when it ended
        without writing its result or its error: killed, crashed, or an exit
        from inside the user's code; else None. The exit file is read first,
        and a rank writes its files before it exits, so no race."""
        text = read_or_none(os.path.join(self.log_dir, f"rank{r}.exit"))
        if text is None or os.path.exists(self.path(r, "json")) or os.path.exists(self.path(r, "error.json")):
            return None
        try:
            code = int(text.strip())
        except ValueError:
            return f"an unreadable exit record {text.strip()!r}"
        if code >= 0:
            return f"exit status {code}"
        try:
            name = f" ({signal.Signals(-code).name})"
        except ValueError:
            name = ""
        return f"killed by signal {-code}{name}"

    def collect(self, returncode: Optional[int]) -> List[RankResult]:
        """Every rank's result after watch(), or the WorldError its files tell:
        a rank that died is named first (the others' errors are then often
        only its absence: a connection reset), then the errors of the user's
        code before those of the infrastructure."""
        world = self.spec["world"]
        deaths = []
        for r in range(world):
            how = self.died(r)
            if how is not None:
                phase = self._phase(read_or_none(self.path(r, "status")))[1]
                tail = (read_or_none(os.path.join(self.log_dir, f"rank{r}.log")) or "")[-2000:].rstrip()
                deaths.append(f"rank {r}'s process ended during {phase} without a result or an error: {how}"
                              + (f"; its output ends:\n{tail}" if tail else ""))
        errors = [json.loads(read_or_none(self.path(r, "error.json")) or "{}") for r in range(world)
                  if os.path.exists(self.path(r, "error.json"))]
        errors.sort(key=lambda e: (e.get("class", ExitClass.INFRA), e.get("rank", 0)))
        if deaths or errors:
            message = "\n".join(deaths + ([error_message(errors)] if errors else []))
            raise WorldError(message, ExitClass.INFRA if deaths
                             else min(e.get("class", ExitClass.INFRA) for e in errors))
        results = []
        for r in range(world):
            text = read_or_none(self.path(r, "json"))
            if text is None:
                tail = (read_or_none(os.path.join(self.log_dir, f"rank{r}.log"))
                        or read_or_none(os.path.join(self.log_dir, "spawn.log")) or "")[-2000:]
                raise WorldError(f"rank {r} ended without a result (exit status {returncode}); "
                                 f"its output ends:\n{tail}", ExitClass.INFRA)
            results.append(json.loads(text))
        return results

    def _phase(self, status: Optional[str]) -> Tuple[Optional[int], str]:
        if not status:
            return None, "had not started (importing torch?)"
        pid, _, phase = status.strip().partition("\t")
        return (int(pid) if pid.isdigit() else None), phase

    def _hang_message(self, statuses: List[Optional[str]], limit: float) -> str:
        pids = [self._phase(s)[0] for s in statuses]
        for pid in pids:
            if pid:
                try:
                    os.kill(pid, signal.SIGUSR1)
                except OSError:
                    pass
        time.sleep(0.5)
        what = "timeout" if limit == self.timeout else "the start-up allowance: importing torch, joining the group"
        lines = [f"no rank moved on for {limit:g} s ({what}): a hang"]
        for r, s in enumerate(statuses):
            _, phase = self._phase(s)
            stack = read_or_none(os.path.join(self.log_dir, f"rank{r}.stack")) or ""
            where = "" if phase == "finished" else " and " + waiting_call(stack)
            lines.append(f"  rank {r}: {phase}{where}")
        return "\n".join(lines)


def error_message(errors: List[RankError]) -> str:
    """The ranks' errors, each with its phase and traceback (spawned and launched checks alike)."""
    lines = []
    for e in errors:
        lines.append(f"rank {e.get('rank')} failed during {e.get('phase')}: {e.get('message')}")
        if e.get("traceback"):
            lines.append(e["traceback"].rstrip())
    return "\n".join(lines)


def end(proc: "subprocess.Popen[bytes]") -> None:
    """Kill spawn.py's whole process group (the ranks with it) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()
