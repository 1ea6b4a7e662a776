"""Where a launched process stands: its rank, the world, its local rank and
host, read from the launcher that started it (torchrun, srun, mpiexec) or from
the process group the caller's own script already formed.

A check with world="launched" (launched.py) runs inside a world someone else
made: no processes of its own, every process of the launch is one rank. Each
launcher says who a process is in its own variables; the first launcher whose
variables are all set wins, in the order of LAUNCHERS: torchrun's first, since
torchrun under srun (one agent per node) sees SLURM's per-agent variables too.
No torch here: the CLI reads this before anything imports torch.
"""

import os
import socket
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

# (launcher, its rank variable, its world-size variable, its local-rank variable)
LAUNCHERS: Tuple[Tuple[str, str, str, str], ...] = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
    ("srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
    ("mpiexec (MPICH)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("mpiexec (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
)
DEFAULT_ADDR, DEFAULT_PORT = "127.0.0.1", "29500"   # torch's env:// defaults' usual values, one node


class LaunchError(Exception):
    """No launcher's variables, or unusable ones: a usage error (exit 2)."""


@dataclass(frozen=True)
class Place:
    rank: int
    world: int
    local_rank: int
    launcher: str     # "torchrun", "srun", ..., or "the caller's process group"
    host: str         # the machine's name, and its node rank where the launcher says (torchrun's GROUP_RANK)


def _host(env: Mapping[str, str]) -> str:
    name = socket.gethostname()
    node = env.get("GROUP_RANK") or env.get("SLURM_NODEID")
    return f"{name} (node {node})" if node else name


def _int(env: Mapping[str, str], var: str, launcher: str) -> int:
    try:
        v = int(env[var])
    except ValueError:
        raise LaunchError(f"{launcher}'s {var}={env[var]!r} is not an integer") from None
    if v < 0:
        raise LaunchError(f"{launcher}'s {var}={v} is negative")
    return v


def from_launcher(env: Optional[Mapping[str, str]] = None) -> Place:
    """This process's place in the launch, from its launcher's variables."""
    env = os.environ if env is None else env
    for launcher, rank_var, size_var, local_var in LAUNCHERS:
        if rank_var in env and size_var in env:
            rank, world = _int(env, rank_var, launcher), _int(env, size_var, launcher)
            if world < 1 or rank >= world:
                raise LaunchError(f"{launcher} says rank {rank} of a world of {world}")
            local = _int(env, local_var, launcher) if local_var in env else rank
            return Place(rank, world, local, launcher, _host(env))
    names = "; ".join(f"{l}: {r}/{s}" for l, r, s, _ in LAUNCHERS)
    raise LaunchError("world 'launched' runs inside a launcher, and no launcher's variables are set here "
                      f"({names}): start it under torchrun, srun or mpiexec, or call check(world='launched') "
                      "after your own init_process_group")


def from_group() -> Place:
    """This process's place in the default process group the caller formed."""
    import torch.distributed as dist

    env = os.environ
    local = int(env["LOCAL_RANK"]) if env.get("LOCAL_RANK", "").isdigit() else dist.get_rank()
    return Place(dist.get_rank(), dist.get_world_size(), local, "the caller's process group", _host(env))


def rendezvous_env(place: Place) -> None:
    """The variables torch's env:// rendezvous reads, from the launcher's: a
    launcher other than torchrun sets none of them (mpiexec and srun on one
    node: the loopback; across nodes the user exports MASTER_ADDR, docs/launchers.md)."""
    os.environ.setdefault("MASTER_ADDR", DEFAULT_ADDR)
    os.environ.setdefault("MASTER_PORT", DEFAULT_PORT)
    os.environ["RANK"], os.environ["WORLD_SIZE"] = str(place.rank), str(place.world)
    os.environ["LOCAL_RANK"] = str(place.local_rank)
