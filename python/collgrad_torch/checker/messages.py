"""What a check's processes tell each other, as types. Every message is a
JSON file in the check's private directory (never the backend under test):

- Spec, spec.json: the parent's plan, read by every rank (world.py writes it,
  worker.py reads it);
- RankResult, rank{R}.json: a rank's analytic gradients, finite-difference
  losses and what it saw, written once at the end (worker.py), read by the
  parent (world.py) and judged (judge.py);
- RankError, rank{R}.error.json: what went wrong on a rank, with its exit
  class (exit_class.py);
- TensorMeta: a rank's description of each input it holds, shared with the
  others through the check's store before the finite differences, and kept in
  its result.

A reader takes a message as the writer's type says (json.load returns Any);
the keys below are the whole of each message."""

from typing import Any, Dict, List, Optional, TypedDict, Union


class _SpecPlan(TypedDict):
    fn: str                        # "module:function" or "file.py:function" (refs.py): fn's or step's
    inputs: str                    # make_inputs's reference, or "": no inputs
    step: bool                     # fn is a training step that runs its own backward
    world: int
    backend: str                   # gloo, nccl, mpi, MODULE:NAME, FILE.py:NAME
    seed: int
    fd: str                        # "auto", "element" or "fast" (options.FdMode)
    fd_budget: int
    step_size: float               # the finite differences' first h (fd.STEPS climbs from it)
    atol: float                    # the tolerances: a difference's error bound is weighed against them
    rtol: float
    tolerance_given: bool          # the user gave atol or rtol: no widening for a lower precision (precision.py)
    replicated: Union[bool, List[str]]
    timeout: float
    transform: Dict[str, Any]      # what shrinking cut from the inputs (inputs.transform)
    roots: Optional[List[int]]     # the backward roots kept (shrinking), or every root
    report_inputs: bool            # each rank describes its inputs (a reproduction needs them)
    modes: List[str]               # torch.compile modes checked beside eager
    cpu_for_cuda: bool             # code written for GPUs run on CPU ranks (cuda_on_cpu.py)
    setup: str                     # a reference to setup(rank, world), or ""
    teardown: str                  # a reference to teardown(rank, world), or ""
    launched: bool                 # the ranks are a launcher's processes, not spawned (launched.py)


class Spec(_SpecPlan, total=False):
    dir: str                       # the check's private directory (world.py)
    store: str                     # its FileStore's path
    sys_path: List[str]            # the caller's sys.path, so the ranks import what it imports


class TensorMeta(TypedDict):
    name: str
    shape: List[int]               # this rank's local part
    numel: int
    replicated: bool               # one logical tensor held alike by several ranks
    holders: List[int]             # the ranks that hold it
    placements: str                # a DTensor's "(Shard(0), Replicate())", else ""
    mesh: Any                      # a DTensor's mesh dimensions (inputs.mesh_dims)
    over: str                      # what a group-held tensor is replicated over, else ""


class _RankResultBody(TypedDict):
    rank: int
    torch: str                     # torch.__version__ on that rank
    backend: str                   # the process group's name
    mode: str                      # "element" or "fast": the finite differences run
    meta: List[TensorMeta]
    data: Any                      # inputs.Prepared.data: what the user's inputs were
    grads: Dict[str, Optional[List[float]]]   # analytic, per tensor held (fast: the first 256)
    dirs: Dict[str, Optional[float]]          # fast mode: the gradient along the tensor's direction
    rounds: List[Dict[str, Any]]   # fd.Round per step taken: this rank's loss at every point of it
    base: List[float]              # at the unperturbed inputs: the analytic pass's (unless widened), repeats
    groups: List[int]              # the sizes of the process groups the code made
    notes: List[str]
    inputs: Dict[str, Any]         # inputs.describe(), when the spec asked for it
    loss_copies: Any               # a DTensor loss's copies (DTensor's contract), else None
    roots: int                     # backward roots the code returned
    lowest: Optional[str]          # the lowest floating dtype the analytic pass computed in, below float64
    backward_calls: int            # backward calls in the analytic pass (a step's microbatches)
    compiled: Dict[str, Dict[str, Any]]   # per compile mode: its loss, grads, dirs, notes or error
    grad_placements: Dict[str, str]       # a DTensor gradient's placements as backward left them
    values: Dict[str, List[float]]        # each held tensor's values (its first 256)
    contract: str                  # a framework's tensor-parallel contract over the inputs (marks.py), or ""


class RankResult(_RankResultBody, total=False):
    seconds: float                 # the rank's time, added when the result is written


RankError = TypedDict("RankError", {
    "rank": int,
    "class": int,                  # an ExitClass: USAGE (the user's code) or INFRA
    "phase": str,                  # where the rank was (its last status)
    "message": str,
    "traceback": str,
})
