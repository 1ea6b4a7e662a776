"""The pytest plugin (entry point pytest11 "collgrad_core.pytest_plugin", the
module's own name, so -p with that name loads the same plugin): a test marked

    @pytest.mark.collgrad(world=[2, 4], backend="gloo", inputs=make_inputs)
    def test_layer(rank, world, x, w):
        ...
        return loss

is not called by pytest itself: it becomes one test per world size
(test_layer[W=2], test_layer[W=4]), each running collgrad_torch.check() on
the function, so its gradients on every rank are compared with finite
differences of the global loss. The marker takes check()'s keywords (world,
backend, inputs, semantics, reduction, replicated, atol, rtol, fd, fd_budget,
seed, timeout, name, modes) and step=True for a training step that runs its
own backward; modes=["eager", "aot_eager", "inductor"] checks each
torch.compile mode against the same eager truth (torch 2.x). inputs is a callable or the name of one in the test's module.

framework="jax" makes the marked test a JAX check (collgrad_jax.check): the
test is make_loss(mesh), returning f built with jax.shard_map, inputs is
make_inputs(world), and the marker takes that check's keywords (world, inputs,
reduction, atol, rtol, fd, fd_budget, seed, timeout, name, vma). Such a test
skips where this interpreter has no jax, and never imports torch.
A marked test must be a module-level function without pytest.mark.parametrize
(its ranks import it by name and pass only rank, world and the inputs): a
method, a parametrized test, an unknown keyword or an argument check()
refuses fails with that one line.

A failure's message is the check's rank/tensor table with the pattern it
matches; a check that could not run (the function raised, a rank hung) is an
error naming what happened, and the session goes on. The checks of a session
share warm worlds (one start of rank processes per world size and backend,
warm.py), whose directories live under pytest's temporary directory, so
pytest-xdist's workers never share anything and no port is chosen.
--collgrad-json DIR keeps each test's report (schema collgrad-check/report/1);
pytest's --junitxml carries the verdicts. A test skips, with the reason,
where this interpreter has no torch or the backend cannot run.

This module imports no framework until a marked test runs, and then only the
one the test asks for (collgrad_torch, or collgrad_jax for framework="jax"):
pytest loads it in every session of an environment where the package is
installed, and it lives in collgrad_core so that neither framework's package
imports the other's.
"""

import importlib.util
import inspect
import math
import os
import re
import signal
import sys
from typing import Any, Dict, List, Optional, Tuple

import pytest

MARKER = "collgrad"


def torch_keywords() -> Tuple[str, ...]:
    """The marker's keywords for a PyTorch test: check()'s options that the
    marker takes (check_options.py says which; step=True names the test the
    step), and framework."""
    from collgrad_torch.checker import check_options

    return tuple(f.name for f in check_options.fields("marker")) + ("framework",)


# with framework="jax": collgrad_jax.check()'s
JAX_KEYWORDS = ("world", "inputs", "mesh", "reduction", "atol", "rtol", "fd", "fd_budget", "seed", "timeout", "name",
                "vma", "framework")


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("collgrad", "gradients of distributed code (collgrad_torch.check)")
    group.addoption("--collgrad-json", metavar="DIR", default=None,
                    help="write each collgrad test's report (collgrad-check/report/1 JSON) into DIR")
    group.addoption("--collgrad-shrink", type=float, default=None, metavar="SEC", const=60.0, nargs="?",
                    help="shrink each failing check (SEC seconds each, default 60) and write a reproduction "
                         "script beside its report (--collgrad-json DIR, else pytest's temporary directory)")
    group.addoption("--collgrad-cold", action="store_true", default=False,
                    help="start fresh rank processes for every check instead of warm worlds")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "collgrad(world=[2, 4], backend='gloo', inputs=make_inputs, **check_kwargs): run the test "
        "function on W ranks through collgrad_torch.check and compare every rank's gradients with finite "
        "differences of the global loss (one test per world size)")
    _check_options(config)
    config._collgrad_state = _State(config)
    _term_interrupts(config)


def _sigterm(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)   # the clean-up this starts runs to its end
    raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")


def _term_interrupts(config: Any) -> None:
    """SIGTERM (a CI runner's timeout or cancel) interrupts the session as
    Ctrl-C does, where nothing else handles it: pytest then unwinds, the
    running check's processes end on the way (World.run), and
    pytest_unconfigure closes the warm worlds. Left alone, SIGTERM would end
    pytest at once and leave a running check's ranks behind."""
    try:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _sigterm)
            config._collgrad_sigterm = True
    except ValueError:  # not the main thread
        pass


def _check_options(config: Any) -> None:
    """The plugin's options, before any test runs: a report folder that cannot
    be made was an OSError's traceback in every marked test, a shrink budget
    that is nan, infinite or negative was taken as given."""
    out = config.getoption("collgrad_json")
    if out is not None:
        if not out:
            raise pytest.UsageError("--collgrad-json '': expected a directory")
        try:
            os.makedirs(out, exist_ok=True)
            trial = os.path.join(out, f".collgrad-trial{os.getpid()}")
            with open(trial, "x", encoding="utf-8"):
                pass
            os.unlink(trial)
        except OSError as e:
            raise pytest.UsageError(f"--collgrad-json {out}: cannot write there: {e.strerror or e}") from None
    budget = config.getoption("collgrad_shrink")
    if budget is not None and not 0 <= budget < math.inf:
        raise pytest.UsageError(f"--collgrad-shrink: expected a finite number of seconds >= 0, got {budget}")


class _State:
    """The session's warm worlds (opened by the first check, closed at the end) and its counts."""

    def __init__(self, config: Any):
        self.config = config
        self.warm: Any = None
        self.checks = 0

    def warm_worlds(self) -> Any:
        if self.warm is None and not self.config.getoption("collgrad_cold"):
            from collgrad_torch import warm_worlds

            factory = getattr(self.config, "_tmp_path_factory", None)
            tmpdir = str(factory.mktemp("collgrad", numbered=True)) if factory is not None else None
            self.warm = warm_worlds(tmpdir)
            self.warm.__enter__()
        return self.warm

    def close(self) -> None:
        if self.warm is not None:
            self.warm.__exit__(None, None, None)


def pytest_unconfigure(config: Any) -> None:
    state = getattr(config, "_collgrad_state", None)
    if state is not None:
        state.close()
    if getattr(config, "_collgrad_sigterm", False):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    state = getattr(config, "_collgrad_state", None)
    if state is None or not state.checks:
        return
    line = f"collgrad: {state.checks} check(s)"
    if state.warm is not None:
        per = ", ".join(f"W={k[0]} {k[1]}: {w.starts}" for k, w in sorted(state.warm.worlds.items()))
        line += f"; rank processes started {state.warm.starts()} time(s) ({per})"
    else:
        line += "; a fresh world each (--collgrad-cold)"
    terminalreporter.write_line(line)


def _marker(obj: Any) -> Optional[Any]:
    for mark in getattr(obj, "pytestmark", []):
        if mark.name == MARKER:
            return mark
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: Any) -> Optional[List[Any]]:
    if not inspect.isfunction(obj) or not collector.funcnamefilter(name):
        return None
    mark = _marker(obj)
    if mark is None:
        return None
    kwargs = dict(mark.kwargs)
    if mark.args:
        kwargs.setdefault("world", mark.args[0])
    refusal = _misuse(collector, obj, mark)
    if kwargs.get("framework") == "jax" and "mesh" in kwargs:  # one check on the named mesh
        mesh = kwargs["mesh"]
        label = ",".join(f"{k}={v}" for k, v in mesh.items()) if isinstance(mesh, dict) else repr(mesh)
        return [CollgradItem.from_parent(collector, name=f"{name}[mesh={label}]", fn=obj,
                                         world=kwargs.pop("world", None), options=kwargs, refusal=refusal)]
    worlds = kwargs.pop("world", [2, 4])
    worlds = list(worlds) if isinstance(worlds, (list, tuple)) else [worlds]
    return [CollgradItem.from_parent(collector, name=f"{name}[W={w}]", fn=obj, world=w, options=kwargs,
                                     refusal=refusal) for w in worlds]


def _misuse(collector: Any, obj: Any, mark: Any) -> Optional[str]:
    """Why a marked test cannot be checked as written, found at collection
    (each of its items then fails with this line alone), or None."""
    framework = mark.kwargs.get("framework", "torch")
    if framework not in ("torch", "jax"):
        return f"the collgrad marker's framework is 'torch' (the default) or 'jax', got {framework!r}"
    known = JAX_KEYWORDS if framework == "jax" else torch_keywords()
    unknown = sorted(set(mark.kwargs) - set(known))
    if unknown:
        return (f"the collgrad marker{' with framework=jax' if framework == 'jax' else ''} has no keyword "
                f"{', '.join(unknown)} (it takes {', '.join(known)})")
    if len(mark.args) > 1 or (mark.args and "world" in mark.kwargs):
        return "the collgrad marker takes the world sizes as its only positional argument, the rest as keywords"
    if isinstance(collector, pytest.Class):
        return (f"{obj.__qualname__} is a method: a collgrad test must be a module-level function "
                "(its ranks import it by name and call it with rank, world and the inputs)")
    if any(m.name == "parametrize" for m in getattr(obj, "pytestmark", [])):
        return ("pytest.mark.parametrize does not reach a collgrad test (its ranks call it with rank, world "
                "and make_inputs' inputs only): write one function per variant, or carry the variant in the inputs")
    return None


class CollgradUsage(Exception):
    """The test cannot be checked as written: the message says why, alone."""


class CollgradFailure(AssertionError):
    """A wrong gradient, or a check that could not run: the message is the table."""

    def __init__(self, result: Any):
        super().__init__(result.table())
        self.result = result


class CollgradItem(pytest.Item):
    def __init__(self, *, fn: Any, world: Any, options: Dict[str, Any], refusal: Optional[str] = None,
                 **kw: Any):
        super().__init__(**kw)
        self.fn, self.world, self.options, self.refusal = fn, world, options, refusal
        for mark in getattr(fn, "pytestmark", []):  # skip, skipif, xfail, ... as on any test
            if mark.name != MARKER:
                self.own_markers.append(mark)
        self.user_properties.append(("world", world))
        default = "jax:cpu" if options.get("framework") == "jax" else "gloo"
        self.user_properties.append(("backend", options.get("backend", default)))

    def _ref(self, obj: Any, what: str) -> str:
        """The test's own module is named by its file (pytest's import modes
        give it names no rank could import); other modules by module name."""
        module = self.getparent(pytest.Module)
        if module is not None and getattr(obj, "__module__", None) == module.obj.__name__:
            qual = obj.__qualname__
            if "<locals>" in qual:
                raise pytest.UsageError(f"{what} {qual}: a collgrad test needs a module-level function")
            return f"{module.path}:{qual}"
        from . import refs

        return refs.ref_of(obj, what)

    def _arguments(self) -> Tuple[str, Dict[str, Any]]:
        opts = dict(self.options)
        inputs = opts.pop("inputs", None)
        if isinstance(inputs, str) and ":" not in inputs:
            module = self.getparent(pytest.Module)
            if module is None or not hasattr(module.obj, inputs):
                raise pytest.UsageError(f"inputs='{inputs}' is not a function of the test's module")
            inputs = getattr(module.obj, inputs)
        if inputs is not None and not isinstance(inputs, str):
            inputs = self._ref(inputs, "inputs")
        opts["inputs"] = inputs
        opts.setdefault("name", self.nodeid.split("[W=")[0].split("[mesh=")[0])
        ref = self._ref(self.fn, "test")
        if opts.pop("step", False):
            opts["step"] = ref
            return "", opts
        return ref, opts

    def runtest(self) -> None:
        if self.refusal:
            raise CollgradUsage(self.refusal)
        named_mesh = self.world is None and "mesh" in self.options  # a JAX test on a named mesh: its size
        if not named_mesh and not (isinstance(self.world, int) and not isinstance(self.world, bool)
                                   and self.world >= 1):
            raise CollgradUsage(f"world sizes must be positive integers, got {self.world!r}")
        from . import report

        state: _State = getattr(self.config, "_collgrad_state")
        jax = self.options.get("framework") == "jax"
        result, ref, opts = self._check_jax() if jax else self._check_torch(state)
        state.checks += 1
        self.user_properties.append(("collgrad_status", result.status))
        out = self.config.getoption("collgrad_json")
        if out:
            os.makedirs(out, exist_ok=True)
            safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", self.nodeid).strip("_")
            report.write_json(os.path.join(out, safe + ".json"), [result])
        if result.status == "fail" and self.config.getoption("collgrad_shrink") and result.framework == "pytorch":
            self.shrunk = self._shrink(ref, opts, out)
        if not result.ok:
            raise CollgradFailure(result)
        if result.status == "inconclusive":  # neither right nor wrong: the finite differences cannot tell
            pytest.skip(f"inconclusive: {_first_unsure(result)}")

    def _check_torch(self, state: _State) -> Tuple[Any, str, Dict[str, Any]]:
        """collgrad_torch.check on the test: its result, and the reference and options it ran with."""
        reason = unavailable(self.options.get("backend", "gloo"), self.world)
        if reason:
            pytest.skip(reason)
        from collgrad_torch import CheckError, check

        state.warm_worlds()
        try:
            ref, opts = self._arguments()
            opts.pop("framework", None)
            return check(ref or None, world=self.world, **opts), ref, opts
        except (CheckError, pytest.UsageError) as e:  # check()'s refusal of an argument: the line is the message
            raise CollgradUsage(str(e)) from None

    def _check_jax(self) -> Tuple[Any, str, Dict[str, Any]]:
        """The test is make_loss(mesh): collgrad_jax.check, one device process per world."""
        if importlib.util.find_spec("jax") is None:
            pytest.skip(f"collgrad: {sys.executable} has no jax")
        import collgrad_jax

        try:
            ref, opts = self._arguments()
            opts.pop("framework", None)
            return collgrad_jax.check(ref, world=self.world, **opts), ref, opts
        except (collgrad_jax.CheckError, pytest.UsageError) as e:
            raise CollgradUsage(str(e)) from None

    def _shrink(self, ref: str, opts: Dict[str, Any], out: Optional[str]) -> str:
        """The shrink's summary and where its reproduction went."""
        from collgrad_torch.checker import shrinking

        from . import report

        from collgrad_torch import CheckError

        kw = {k: v for k, v in opts.items() if k != "name"}
        try:
            s = shrinking.shrink(ref or None, world=self.world, budget=self.config.getoption("collgrad_shrink"), **kw)
        except CheckError as e:  # an option a shrink cannot carry (modes)
            return f"not shrunk: {e}"
        text = s.summary()
        if s.script:
            where = out or str(getattr(self.config, "_tmp_path_factory").mktemp("collgrad-repro"))
            os.makedirs(where, exist_ok=True)
            path = os.path.join(where, re.sub(r"[^A-Za-z0-9_]+", "_", self.name).strip("_") + "_repro.py")
            report.write_text(path, s.script)
            text += f"\n  reproduction: {sys.executable} {os.path.abspath(path)}"
        return text

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        if isinstance(excinfo.value, CollgradUsage):
            return f"collgrad: {excinfo.value}"
        if isinstance(excinfo.value, CollgradFailure):
            shrunk = getattr(self, "shrunk", "")
            return excinfo.value.result.table() + ("\n" + shrunk if shrunk else "")
        return super().repr_failure(excinfo)

    def reportinfo(self) -> Tuple[Any, Optional[int], str]:
        return self.path, None, self.name


def unavailable(backend: str, world: Any) -> Optional[str]:
    """Why this interpreter cannot run a check of `backend` at `world` ranks, or None."""
    if importlib.util.find_spec("torch") is None:
        return f"collgrad: {sys.executable} has no torch"
    import torch.distributed as dist

    if not dist.is_available():
        return "collgrad: this torch was built without torch.distributed"
    if backend == "gloo" and not dist.is_gloo_available():
        return "collgrad: this torch has no gloo backend"
    if backend == "mpi" and not dist.is_mpi_available():
        return "collgrad: this torch has no MPI backend"
    if backend == "nccl":
        import torch

        if not dist.is_nccl_available():
            return "collgrad: this torch has no NCCL backend"
        if torch.cuda.device_count() < (world if isinstance(world, int) else 1):
            return f"collgrad: NCCL at W={world} needs {world} GPUs, this machine shows {torch.cuda.device_count()}"
    return None


def _first_unsure(result: Any) -> str:
    """The first inconclusive check's words: its tensor, rank and the bound."""
    for r in result.all():
        for c in r.checks:
            if c.inconclusive:
                return f"{c.tensor} on rank {c.rank}: {c.note.split('inconclusive: ', 1)[-1]}"
    return "the finite differences cannot resolve a gradient"
