"""check()'s options, defined once (issue 63 item 5): each field's type,
default and description. check() gives its keywords to CheckOptions and
validates them here, once; `python -m collgrad_torch check` makes its flags
from the fields (cli.py), the pytest marker takes the fields it lists
(collgrad_core/pytest_plugin.py), and shrink() carries them into its
candidates and its reproduction script (shrinking.py). A new option is one
field here; check()'s signature (kept spelled out for editors and mypy)
must match the fields, which tests/test_usercode_judge.py holds it to."""

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from collgrad_core import options
from collgrad_core.errors import CheckError
from collgrad_core.options import FdMode, Reduction, Semantics, option

Fn = Union[str, Callable[..., Any]]


def _modes(text: str) -> List[str]:
    return [m for m in text.split(",") if m]


@dataclass(frozen=True)
class CheckOptions:
    world: Union[int, str] = option(
        4, "world sizes, comma-separated (default 4), or 'launched': every process of the torchrun, srun or "
           "mpiexec launch this runs under is a rank (docs/launchers.md)", cli=False)
    inputs: Optional[Fn] = option(None, "FILE.py:NAME of make_inputs(rank, world) -> dict",
                                  cli=dict(metavar="FILE.py:NAME"))
    backend: str = option("gloo", "the process group: gloo, nccl, mpi, MODULE:NAME or FILE.py:NAME")
    semantics: Semantics = option(
        "auto", "per_rank: rank r's truth is d(sum_k L_k)/dx_r; replicated: dL_0/dx_r, one loss every rank holds; "
                "auto (default): replicated where every rank's loss is the same logical loss",
        cli=dict(choices=options.WORDS["semantics"]))
    atol: Optional[float] = option(
        None, f"absolute tolerance (default {options.DEFAULT_ATOL:g}, wider for float16/bfloat16 gradients: "
              "docs/user-code.md)", cli=dict(type=float))
    rtol: Optional[float] = option(None, f"relative tolerance (default {options.DEFAULT_RTOL:g}, likewise)",
                                   cli=dict(type=float))
    fd: FdMode = option(
        "auto", "finite differences element by element, along one random direction per tensor (fast), or auto "
                "(default): element mode up to --fd-budget elements, fast beyond",
        cli=dict(choices=options.WORDS["fd"]))
    seed: int = option(0, "the ranks' random state and fast mode's directions", cli=dict(type=int))
    timeout: float = option(60.0, "seconds without progress that make a hang", cli=dict(type=float))
    step: Optional[Fn] = option(None, "FILE.py:NAME of a training step that runs its own backward (instead of fn)",
                                cli=dict(metavar="FILE.py:NAME"))
    reduction: Reduction = option("sum", "the global loss: the ranks' losses summed (default) or averaged (DDP's "
                                         "mean)", cli=dict(choices=options.WORDS["reduction"]))
    replicated: Union[bool, Sequence[str]] = option(
        (), "an input, or a module input's parameter or submodule by dotted path (model.row.bias), that is one "
            "logical tensor held by every rank (repeatable)", cli=dict(action="append", default=[], metavar="NAME"))
    fd_budget: int = option(4096, "element mode up to this many input elements", cli=dict(type=int))
    python: Optional[str] = option(None, "the ranks' interpreter (default: this one)", cli=False, marker=False)
    name: Optional[str] = option(None, "the case's name in the reports (default: the function's reference)")
    roots: Optional[Sequence[int]] = option(None, "backward only these of fn's returned roots", cli=False,
                                            marker=False)
    modes: Optional[Sequence[str]] = option(
        None, "also check under torch.compile(backend=M) for each non-eager M (e.g. eager,aot_eager,inductor; "
              "torch 2.x), every mode against the eager truth", cli=dict(type=_modes, metavar="M,M"), shrink=False)
    cpu_for_cuda: bool = option(
        False, "run code written for GPUs on CPU ranks: CUDA device arguments, .cuda(), "
               "torch.cuda.current_device() and set_device() made CPU (cuda_on_cpu.py)",
        cli=dict(action="store_true"))
    setup: Optional[Fn] = option(None, "setup(rank, world) on every rank before make_inputs (a framework's state: "
                                       "Megatron's initialize_model_parallel)", cli=dict(metavar="FILE.py:NAME"))
    teardown: Optional[Fn] = option(None, "teardown(rank, world) on every rank after the check (Megatron's "
                                          "destroy_model_parallel), so the next check in a warm world starts clean",
                                    cli=dict(metavar="FILE.py:NAME"))

    def validated(self) -> "CheckOptions":
        """self, its values checked (CheckError, one line); replicated="name" is one name."""
        options.refuse(semantics=self.semantics, reduction=self.reduction, fd=self.fd, atol=self.atol,
                       rtol=self.rtol, fd_budget=self.fd_budget, seed=self.seed, timeout=self.timeout, name=self.name)
        modes = self.modes
        if modes is not None and (isinstance(modes, str) or not modes
                                  or not all(isinstance(m, str) and m for m in modes) or len(set(modes)) != len(modes)):
            raise CheckError(f"modes must be a list of distinct names (eager, aot_eager, inductor, or another "
                             f"torch.compile backend), got {modes!r}")
        replicated = self.replicated
        if isinstance(replicated, str):  # one name: "model" is not the five names m, o, d, e, l
            replicated = [replicated]
        if not isinstance(replicated, bool) and not all(isinstance(n, str) and n for n in replicated):
            raise CheckError(f"replicated must be True, False, or input names (non-empty strings), got {replicated!r}")
        return dataclasses.replace(self, replicated=replicated if isinstance(replicated, bool) else tuple(replicated))

    def changed(self, *, only: str = "") -> Dict[str, Any]:
        """The options that differ from their defaults (with `only` a metadata
        key: of the fields that do not set it False)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if (not only or f.metadata.get(only, True) is not False) and getattr(self, f.name) != f.default}


def fields(where: str) -> List["dataclasses.Field[Any]"]:
    """The fields a place takes: "cli", "marker" or "shrink"."""
    return [f for f in dataclasses.fields(CheckOptions) if f.metadata.get(where, True) is not False]


def of(**given: Any) -> CheckOptions:
    """CheckOptions from keywords, a misspelt one refused as check() refuses it."""
    known = {f.name for f in dataclasses.fields(CheckOptions)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise CheckError(f"check() has no option {', '.join(unknown)} (it takes {', '.join(sorted(known))})")
    return CheckOptions(**given)
