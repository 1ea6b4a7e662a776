"""python -m collgrad_jax.runner: the C tool's cases through real JAX, one
process for the W devices (started by the C tool: --backend jax:shard_map).

Writes rank r's lines to RESULTS_PREFIX + r and its state to STATUS_PREFIX
+ r, in the PyTorch runner's formats, so the C side reads a JAX run as it
reads W PyTorch ranks. Exit status: 0 when every job was reported, 2 for a
bad IR or arguments, 3 when JAX cannot run here (missing, too few devices).
"""

import argparse
import sys
from typing import Any, Dict, List, Optional

from collgrad_core.exit_class import ExitClass
from collgrad_core.result_files import Writer


class Files:
    """Every device's results and status files: the PyTorch ranks' Writer, one per device."""

    def __init__(self, results: str, status: str, world: int):
        self.writers = [Writer(f"{results}{r}", f"{status}{r}") for r in range(world)]

    def line(self, rank: int, obj: Dict[str, Any]) -> None:
        self.writers[rank].line(obj)

    def everyone(self, obj: Dict[str, Any]) -> None:
        for w in self.writers:
            w.line(obj)

    def state(self, job: int, what: str) -> None:
        for w in self.writers:
            w.state(job, what)


def _args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m collgrad_jax.runner")
    p.add_argument("--ir", required=True, help="the exported IR document (one world)")
    p.add_argument("--api", required=True, choices=["shard_map", "shard_map_novma"])
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--results-prefix", required=True, help="rank r's results file is this prefix and r")
    p.add_argument("--status-prefix", required=True)
    p.add_argument("--first-job", type=int, default=0)
    return p.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = _args(argv)
    files = Files(args.results_prefix, args.status_prefix, args.world)
    files.state(-1, "importing jax")
    try:
        import jax
        from jax.sharding import Mesh
        import numpy as np
    except Exception as e:
        files.everyone({"fatal": f"{sys.executable} cannot import jax: {type(e).__name__}: {e}"})
        return ExitClass.INFRA
    jax.config.update("jax_enable_x64", True)
    from collgrad_core import ir

    from . import job, local_ops

    doc, why = ir.load_for(args.ir, local_ops.missing, "collgrad_jax")
    if doc is None:
        files.everyone({"fatal": why})
        return ExitClass.USAGE
    devices = jax.devices()
    if len(devices) < args.world:
        files.everyone({"fatal": f"JAX has {len(devices)} devices here, the run needs {args.world} "
                                 "(XLA_FLAGS=--xla_force_host_platform_device_count must reach this process)"})
        return ExitClass.INFRA
    try:
        from jax.sharding import AxisType
        mesh = Mesh(np.array(devices[:args.world]), ("i",), axis_types=(AxisType.Auto,))
    except (ImportError, TypeError):
        mesh = Mesh(np.array(devices[:args.world]), ("i",))
    vma = args.api == "shard_map"
    for r in range(args.world):
        files.line(r, {"hello": {"rank": r, "world": args.world, "jax": jax.__version__, "python": sys.executable,
                                 "python_version": sys.version.split()[0], "api": args.api,
                                 "backend": f"cpu (check_vma={vma})", "backend_name": f"cpu, check_vma={vma}",
                                 "device": str(devices[r])}})
    for k in range(args.first_job, len(doc.cases)):
        files.state(k, f"job {k}: {doc.cases[k].name}")
        for r, line in enumerate(job.run(doc.cases[k], mesh, vma)):
            files.line(r, dict(line, job=k, rank=r))
    files.state(len(doc.cases), "finished")
    return ExitClass.PASS


if __name__ == "__main__":
    sys.exit(main())
