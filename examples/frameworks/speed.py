"""What a check of the frameworks' examples costs against a bare run of the same model (issue 61
item 7), measured in one run: not a test (python_usercode_frameworks checks the verdicts).

    python examples/frameworks/speed.py [--world 2]     (torch 2.x venv, frameworks installed; as root
                                                           inside `unshare -n` with `ip link set lo up`)

For torchtitan's FSDP step and Megatron's MLP it prints, in seconds:
- bare: W fresh processes that start, join a gloo group, build the model as make_inputs does (made
  float64 as the check makes it: torchtitan's float32 FSDP reduce-scatter asks gloo for PREMUL_SUM,
  which gloo has not) and run one forward and backward (the step, or fn and backward);
- cold: check() on fresh ranks (fd="fast", cpu_for_cuda=True);
- warm: the same check again in a warm world whose ranks already ran one (the pytest plugin's case);
and cold / bare.
"""

import argparse
import os
import socket
import sys
import time
from typing import Any, Callable, Dict, Tuple

import torch
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import collgrad_torch as cg  # noqa: E402

# name -> (module, make_inputs, fn or step, is_step, check() keywords)
SUBJECTS: Dict[str, Tuple[str, str, str, bool, Dict[str, Any]]] = {
    "torchtitan FSDP step": ("torchtitan_llama", "make_inputs_fsdp", "step", True, {}),
    "Megatron MLP": ("megatron_mlp", "make_inputs", "mlp", False,
                     {"setup": "megatron_mlp.py:setup", "teardown": "megatron_mlp.py:teardown"}),
}


def _bare_rank(rank: int, world: int, port: int, name: str) -> None:
    import importlib

    import torch.distributed as dist
    from collgrad_torch.checker import cuda_on_cpu, inputs as checker_inputs

    module, inputs, fn, is_step, kw = SUBJECTS[name]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    ex = importlib.import_module(module)
    with cuda_on_cpu.active(True):
        if "setup" in kw:
            ex.setup(rank, world)
        # the model the check runs: its inputs made float64 as check() makes them
        args = checker_inputs.prepare(ex.__dict__[inputs](rank, world), ()).kwargs
        out: Any = getattr(ex, fn)(rank, world, **args)
        if not is_step:
            out.backward()
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bare(name: str, world: int) -> float:
    t0 = time.monotonic()
    mp.start_processes(_bare_rank, args=(world, _free_port(), name), nprocs=world, start_method="spawn")
    return time.monotonic() - t0


def check(name: str, world: int) -> Callable[[], cg.Result]:
    module, inputs, fn, is_step, kw = SUBJECTS[name]
    path = os.path.join(HERE, f"{module}.py")
    hooks = {k: os.path.join(HERE, v) for k, v in kw.items()}
    where = f"{path}:{fn}"
    return lambda: cg.check(None if is_step else where, step=where if is_step else None, inputs=f"{path}:{inputs}",
                            world=world, fd="fast", cpu_for_cuda=True, timeout=300, **hooks)


def timed(run: Callable[[], cg.Result]) -> Tuple[float, str]:
    t0 = time.monotonic()
    r = run()
    return time.monotonic() - t0, r.status


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--world", type=int, default=2)
    args = p.parse_args()
    print(f"torch {torch.__version__}, W={args.world}, {os.cpu_count()} CPUs")
    print(f"{'subject':22} {'bare s':>7} {'cold s':>7} {'warm s':>7} {'cold/bare':>9}  verdicts")
    for name in SUBJECTS:
        b = bare(name, args.world)
        run = check(name, args.world)
        cold, s1 = timed(run)
        with cg.warm_worlds():
            run()                      # the warm world's first check starts its ranks
            warm, s2 = timed(run)
        print(f"{name:22} {b:7.1f} {cold:7.1f} {warm:7.1f} {cold / b:9.1f}  {s1}, {s2}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
