"""A check inside a world someone else launched (world="launched"): torchrun
on one node or several, srun, mpiexec, or the caller's own script after its
init_process_group. Every process of the launch is one rank; nothing is
spawned.

Each process runs its rank of the check as a spawned rank does (worker.py:
the analytic pass, the finite differences in lockstep), but its messages go
through the launch's store, since the nodes share no directory: its result,
its error, and a beat every BEAT_S seconds saying it lives and in which phase
it is. Rank 0 judges: when every rank's result is in, its main thread judges
them and publishes the verdict; before that, a thread of its own (the
referee) watches the beats and the errors and decides when the check cannot
finish:
- a rank's error (the user's code raised, on any rank): after a short grace
  for the others' errors, the errors, the user's first (exit 2 or 3);
- a rank whose beat stopped for LOST_S, or that said its launcher is gone:
  its process or its node is gone, named with its host after LEFT_GRACE_S
  for its node's other ranks to say so too (exit 3);
- no rank moved on for `timeout` seconds: a hang, every rank's phase and the
  call its main thread waits in (each rank's watch publishes its own stacks
  when asked).
Rank 0 then writes what it decided (the table, the reports), publishes the
verdict, and every process ends with the verdict's exit status at once,
wherever its main thread was: the launcher's own exit status is the check's
(where the launcher passes its ranks' statuses on: mpiexec, srun; torchrun
reports any failure as 1). A process whose launcher is gone (its agent
killed) ends itself (exit 3): nothing is left running.

Who owns what: the check owns its store connections and its watch thread; a
process group this module formed (init_process_group through env://) stays
for the process's later checks; the caller's group is the caller's.
"""

import contextlib
import datetime
import faulthandler
import itertools
import json
import os
import pickle
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from collgrad_core.exit_class import ExitClass
from . import launched_env, worker
from .launched_env import LaunchError, Place
from .messages import RankError, RankResult, Spec
from collgrad_core.result import Result
from collgrad_core.stacks import waiting_call
from .world import ERROR_GRACE_S, STARTING, STARTUP_S, error_message

BEAT_S = 0.5
LOST_S = 15.0        # a beat this late: the rank's process or node is gone (a loaded node still beats)
LEFT_GRACE_S = 3.0   # after the first rank says its launcher is gone, its node's others say so too
_checks = itertools.count()   # each process runs its checks in the same order: the n-th check's keys


def _connect(timeout_s: float) -> Tuple[Any, bool]:
    """A store connection of the check's own (the watch thread has another:
    a connection blocked in a wait blocks every other call on it), to the
    launch's TCPStore at MASTER_ADDR:MASTER_PORT; else the caller's group's
    default store, shared (False: no second connection can be made)."""
    import torch.distributed as dist

    addr, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT", "")
    if addr and port.isdigit():
        return dist.TCPStore(addr, int(port), is_master=False, timeout=datetime.timedelta(seconds=timeout_s)), True
    return dist.distributed_c10d._get_default_store(), False


class LaunchedRank(worker.Rank):
    """A rank whose messages go through the launch's store under the check's prefix."""

    def __init__(self, spec: Spec, place: Place, prefix: str, abort: Callable[[str, int], Result]):
        super().__init__(spec, place.rank)
        self.place, self.prefix, self.local_rank, self.abort = place, prefix, place.local_rank, abort
        self.separate = True
        self.watch: Optional["Watch"] = None

    def store_for(self, timeout_s: float) -> Any:
        import torch.distributed as dist

        base, self.separate = _connect(timeout_s)
        return dist.PrefixStore(self.prefix, base)

    def join(self) -> Tuple[Any, str]:
        import torch.distributed as dist

        from .. import backend as pg

        timeout_s = 2 * self.spec["timeout"] + 10
        if not dist.is_initialized():
            launched_env.rendezvous_env(self.place)
            name = pg.resolve(self.spec["backend"])
            pg.share_gpu(name, self.place.rank)
            dist.init_process_group(name, init_method="env://", rank=self.place.rank, world_size=self.world,
                                    timeout=datetime.timedelta(seconds=timeout_s))
        if self.store is None:
            self.store = self.store_for(timeout_s)
            self.watch = _start_watch(self, self.abort)
        return self.store, str(dist.get_backend())

    def status(self, phase: str, force: bool = True) -> None:
        self.phase = phase   # the watch thread beats it

    def write(self, suffix: str, obj: Any) -> None:
        key = {"json": "result", "error.json": "error"}[suffix]
        if self.store is None:   # failed before the group formed: no store to tell; say it here
            print(f"collgrad-check rank {self.rank}: {obj.get('message')}", file=sys.stderr, flush=True)
            return
        _set(self.store, f"{key}/{self.rank}", json.dumps(obj))
        self.store.add(f"{key}s", 1)


class Watch(threading.Thread):
    """Every rank's: its beat, its launcher's life, its stacks on request, the
    verdict that ends it; rank 0's also referees (the class docstring above)."""

    def __init__(self, r: LaunchedRank, store: Any, abort: Callable[[str, int], Result]):
        super().__init__(name="collgrad-check watch", daemon=True)
        self.r, self.store, self.abort = r, store, abort
        self.parent = os.getppid()
        self.waiting = threading.Event()   # the main thread waits for the verdict: it ends itself
        self.stop = threading.Event()
        self.decided = threading.Lock()    # rank 0: the main thread's verdict or the referee's, once
        self.beats: Dict[int, Tuple[str, float]] = {}
        self.phases: List[str] = []
        self.moved = time.monotonic()
        self.first_error: Optional[float] = None
        self.first_lost: Optional[float] = None
        self.dumped = False

    def run(self) -> None:
        tick = 0
        try:
            while not self.stop.wait(BEAT_S):
                tick += 1
                self.store.set(f"beat/{self.r.rank}", f"{tick}\t{self.r.phase}\t{self.r.place.host}")
                if os.getppid() != self.parent:   # its agent killed: the others learn it at once, then it ends
                    _set(self.store, f"left/{self.r.rank}", "1")
                    _end(f"the launcher that started this rank (pid {self.parent}) is gone", ExitClass.INFRA)
                if not self.dumped and self.store.add("dumps", 0):
                    self.dumped = True
                    _set(self.store, f"stack/{self.r.rank}", _own_stacks())
                if self.store.add("verdicts", 0) and not self.waiting.is_set():
                    code = int(self.store.get("verdict").decode())
                    self.store.add("acks", 1)   # rank 0 (perhaps the store's host) waits for it to leave
                    _end("", code)
                if self.r.rank == 0:
                    self.referee()
        except Exception as e:  # the store's host gone (the node of rank 0, or torchrun's agent there)
            if not self.stop.is_set():
                _end(f"lost the launch's store ({type(e).__name__}: {e}): the node holding it is gone?",
                     ExitClass.INFRA)

    def referee(self) -> None:
        now, world = time.monotonic(), self.r.world
        if self.store.add("joined", 0) < world:
            return
        phases = []
        for k in range(world):
            tick, phase, host = self.store.get(f"beat/{k}").decode().split("\t", 2)
            if self.beats.get(k, ("", 0.0))[0] != tick:
                self.beats[k] = (tick, now)
            phases.append(phase)
        if phases != self.phases:
            self.phases, self.moved = phases, now
        lost = [k for k in range(world) if now - self.beats[k][1] > LOST_S or _has(self.store, f"left/{k}")]
        errors: List[RankError] = []
        if self.store.add("errors", 0):
            self.first_error = self.first_error or now
            errors = [json.loads(self.store.get(f"error/{k}").decode()) for k in range(world)
                      if _has(self.store, f"error/{k}")]
            errors.sort(key=lambda e: (e.get("class", ExitClass.INFRA), e.get("rank", 0)))
        if lost:   # a node's ranks each notice their agent's death on their own beat: name them all
            self.first_lost = first_lost = self.first_lost or now
            if now - first_lost > LEFT_GRACE_S or len(lost) == world - 1:
                said = [_lost_message(self.store, lost, phases)] + ([error_message(errors)] if errors else [])
                self.decide("\n".join(said), ExitClass.INFRA)
            return   # the lost ranks decide, whatever the others' transports raise meanwhile
        # a peer gone shows first as the others' transport errors ("connection reset"): while every
        # error is the transport's and not every rank wrote one, wait for its beat to stop, to name it
        quiet = ERROR_GRACE_S if any(e.get("class") != ExitClass.INFRA for e in errors) or len(errors) == world \
            else LOST_S + 2 * BEAT_S
        if errors and self.first_error is not None and now - self.first_error > quiet:
            self.decide(error_message(errors), min(e.get("class", ExitClass.INFRA) for e in errors))
        starting = any(p in STARTING or p == "starting" for p in phases)
        limit = max(self.r.spec["timeout"], STARTUP_S) if starting else self.r.spec["timeout"]
        if now - self.moved > limit:
            self.decide(self.hang_message(phases, limit), ExitClass.INFRA)

    def decide(self, message: str, code: int) -> None:
        """The referee's verdict: rank 0 tells it, publishes it, and every process ends."""
        if not self.decided.acquire(blocking=False):
            return   # the main thread's verdict is on its way
        result = self.abort(message, code)
        publish(self.store, result, code)
        lost = sum(now_lost for now_lost in (_has(self.store, f"left/{k}") for k in range(self.r.world)))
        heard(self.store, self.r.world - 1 - lost)
        _end("", code)

    def hang_message(self, phases: List[str], limit: float) -> str:
        self.store.add("dumps", 1)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and not all(_has(self.store, f"stack/{k}") for k in range(self.r.world)):
            time.sleep(0.1)
        lines = [f"no rank moved on for {limit:g} s: a hang"]
        for k, phase in enumerate(phases):
            stack = self.store.get(f"stack/{k}").decode() if _has(self.store, f"stack/{k}") else ""
            lines.append(f"  rank {k}: {phase} and {waiting_call(stack)}")
        return "\n".join(lines)


def _has(store: Any, key: str) -> bool:
    """Whether key was set with _set (torch 1.13's stores have no check(), and
    a wait that times out logs a warning): its counter, which add(0) reads."""
    return bool(store.add(f"{key}#", 0))


def _set(store: Any, key: str, value: str) -> None:
    store.set(key, value)
    store.add(f"{key}#", 1)


def _own_stacks() -> str:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as f:
        faulthandler.dump_traceback(f, all_threads=True)
        f.seek(0)
        return f.read()


def _lost_message(store: Any, lost: List[int], phases: List[str]) -> str:
    lines = [f"lost {len(lost)} of {len(phases)} ranks (a process or a node gone):"]
    for k in lost:
        host = store.get(f"beat/{k}").decode().split("\t", 2)[2]
        why = "its launcher is gone" if _has(store, f"left/{k}") else f"no beat for {LOST_S:g} s"
        lines.append(f"  rank {k} on {host}: {why}; last seen during {phases[k]}")
    return "\n".join(lines)


def _end(message: str, code: int) -> None:
    if message:
        print(f"collgrad-check: {message}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def heard(store: Any, ranks: int, limit_s: float = 10.0) -> None:
    """Rank 0, before it leaves: until `ranks` other ranks have read the
    verdict (under mpiexec or srun rank 0 holds the store: leaving first would
    end the others with "connection reset"), or limit_s has passed."""
    deadline = time.monotonic() + limit_s
    while store.add("acks", 0) < ranks and time.monotonic() < deadline:
        time.sleep(0.05)


def publish(store: Any, result: Result, code: int) -> None:
    store.set("result", pickle.dumps(result))
    store.set("verdict", str(int(code)))
    store.add("verdicts", 1)


_abort_sink: List[Callable[[Result], None]] = []


def on_abort(result: Result) -> None:
    """Where rank 0 writes a check that cannot finish, before every process
    ends: the command line's table and reports (reporting_aborts), else the table."""
    if _abort_sink:
        _abort_sink[-1](result)
    else:
        print(result.table(), flush=True)


@contextlib.contextmanager
def reporting_aborts(sink: Callable[[Result], None]) -> Iterator[None]:
    _abort_sink.append(sink)
    try:
        yield
    finally:
        _abort_sink.pop()


def place() -> Place:
    """This process's place: the caller's process group's, else its launcher's."""
    import torch.distributed as dist

    return launched_env.from_group() if dist.is_available() and dist.is_initialized() \
        else launched_env.from_launcher()


def run(spec: Spec, judge: Callable[[List[RankResult]], Tuple[Result, int]],
        abort: Callable[[str, int], Result]) -> Result:
    """This process's rank of the check; rank 0 judges (judge: every rank's
    result to the Result and its exit status; abort: an error message and its
    class to the Result that says so, written where the user reads it). Every
    rank returns rank 0's Result; a check that cannot finish ends the process."""
    where = place()
    spec["dir"] = tempfile.mkdtemp(prefix="collgrad-launched-")
    r = LaunchedRank(spec, where, f"collgrad-check/{next(_checks)}/", abort)
    watch: Optional[Watch] = None
    try:
        code = worker.run_rank(r)
        watch = r.watch
        if watch is None:   # it failed before the group formed: nothing to tell the others through
            _end("", code)
        assert watch is not None
        watch.waiting.set()
        if r.rank == 0 and code == 0:
            while r.store.add("results", 0) < r.world:
                time.sleep(0.05)
            ranks = [json.loads(r.store.get(f"result/{k}").decode()) for k in range(r.world)]
            result, verdict = judge(ranks)
            if watch.decided.acquire(blocking=False):
                publish(r.store, result, verdict)
        while not r.store.add("verdicts", 0):
            time.sleep(0.05)
        result = pickle.loads(r.store.get("result"))
        if r.rank == 0:
            heard(r.store, r.world - 1)
        else:
            r.store.add("acks", 1)
        return result
    finally:
        if watch is not None:
            watch.stop.set()
        import shutil

        shutil.rmtree(spec["dir"], ignore_errors=True)


def _start_watch(r: LaunchedRank, abort: Callable[[str, int], Result]) -> Watch:
    """Once the group formed: announce the rank and start its watch on a connection of its own."""
    store = r.store_for(2 * r.spec["timeout"] + 10) if r.separate else r.store
    store.set(f"beat/{r.rank}", f"0\t{r.phase}\t{r.place.host}")
    store.add("joined", 1)
    w = Watch(r, store, abort)
    w.start()
    return w
