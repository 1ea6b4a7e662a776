"""The check inside the launchers users run (issue 62; ctest python_usercode_launched, torch 2.x):
world="launched" must give the spawned check's verdicts and patterns on the same code, end
every process with the check's exit status, and end every rank when a node is lost.

- two torchrun agents as two nodes (c10d rendezvous on the loopback), 2 x 2 = W=4: the zoo's
  2-D FSDP+TP and HSDP steps, correct and planted, through a training script's own
  init_process_group and check(world="launched") (launched/driver.py), against the same
  checks spawned at W=4;
- mpiexec (MPICH's hydra: PMI_RANK, PMI_SIZE), W=2, through the command line: the zoo's DDP
  steps pass and fail as spawned, the user's TypeError is exit 2 on every process;
- a node lost: its agent killed (SIGKILL, --max-restarts 0) while the check runs: the other
  node's ranks end with exit 3 naming the lost ranks and their node, nothing left running;
- no launcher: exit 2, one line.
Multi-process runs bind the loopback: run as root inside `unshare -n` (ctest's caller does)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from typing import Dict, List

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "launched"))

import collgrad_torch as cg  # noqa: E402
from driver import summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
PARALLEL = os.path.join(ROOT, "examples", "user_code", "parallel")
DATA_PARALLEL = os.path.join(ROOT, "examples", "user_code", "data_parallel.py")
TORCH2 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 6)
ZOO_2D = [os.path.join(PARALLEL, f) for f in ("fsdp_tp_step.py:step", "fsdp_tp_step.py:step_bias_twice",
                                               "hsdp_step.py:step", "hsdp_step.py:step_sum")]


def _env(**extra: str) -> Dict[str, str]:
    paths = [os.path.dirname(HERE), PARALLEL, os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p), OMP_NUM_THREADS="1",
                PYTHONDONTWRITEBYTECODE="1", **extra)


def _torchrun(port: int, args: List[str], env: Dict[str, str], log: str) -> "subprocess.Popen[bytes]":
    """One node's torchrun agent of a two-node, 2 x 2 launch."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "2",
           "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", f"cg{port}",
           "--max-restarts", "0"] + args
    with open(log, "wb") as f:
        return subprocess.Popen(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)


def _text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _ours(mark: str) -> List[str]:
    """The processes still running whose command line names `mark`."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if mark in ln and "ps -eo" not in ln]


class Launched(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="cg-launched-")

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    @unittest.skipUnless(TORCH2, "the zoo's 2-D steps need torch >= 2.6")
    def test_two_torchrun_nodes_give_the_spawned_verdicts(self) -> None:
        out = os.path.join(self.tmp, "launched.json")
        driver = [os.path.join(HERE, "launched", "driver.py"), out] + ZOO_2D
        nodes = [_torchrun(29430, driver, _env(), os.path.join(self.tmp, f"node{n}.log")) for n in range(2)]
        codes = [p.wait(timeout=900) for p in nodes]
        logs = "\n".join(_text(os.path.join(self.tmp, f"node{n}.log"))[-3000:] for n in range(2))
        self.assertTrue(os.path.exists(out), logs)
        with open(out, encoding="utf-8") as f:
            launched = json.load(f)
        with cg.warm_worlds():
            spawned = [summary(cg.check(step=s, inputs=s.rsplit(":", 1)[0] + ":make_inputs", world=4,
                                        reduction="mean", timeout=120)) for s in ZOO_2D]
        for s, a, b in zip(ZOO_2D, launched, spawned):
            with self.subTest(step=os.path.basename(s)):
                self.assertEqual(a, b)
        # the planted steps fail, the correct ones pass (as the zoo says), so both agents report a failure
        self.assertEqual([r["status"] for r in launched], ["pass", "fail", "pass", "fail"])
        self.assertEqual(codes, [1, 1], logs)   # torchrun ends 1 on any rank's non-zero status

    def test_mpiexec_gives_the_spawned_verdicts_and_statuses(self) -> None:
        if shutil.which("mpiexec") is None:
            self.skipTest("no mpiexec (scripts/setup.sh installs MPICH)")
        for fn, reduction, want in (("ddp_step", "mean", 0), ("ddp_step", "sum", 1),
                                    ("allreduce_step_no_divide", "mean", 1)):
            with self.subTest(fn=fn, reduction=reduction):
                report = os.path.join(self.tmp, f"{fn}-{reduction}.json")
                p = subprocess.run(["mpiexec", "-n", "2", sys.executable, "-m", "collgrad_torch", "check",
                                    "--step", f"{DATA_PARALLEL}:{fn}", "--inputs", f"{DATA_PARALLEL}:make_inputs",
                                    "--reduction", reduction, "--world", "launched", "--json", report],
                                   env=_env(), capture_output=True, text=True, timeout=600)
                self.assertEqual(p.returncode, want, p.stdout[-3000:] + p.stderr[-3000:])
                self.assertEqual(p.stdout.count(" checks passed"), 1, "rank 0 alone reports")
                spawned = cg.check(step=f"{DATA_PARALLEL}:{fn}", inputs=f"{DATA_PARALLEL}:make_inputs", world=2,
                                   reduction=reduction)
                with open(report, encoding="utf-8") as f:
                    case = json.load(f)["cases"][0]
                self.assertEqual(case["status"], spawned.status)
                self.assertEqual(sorted((c["rank"], c["tensor"], c["status"], c.get("note", "")) for c in case["checks"]),
                                 sorted((c.rank, c.tensor, c.status, "; ".join(([c.note] if c.note else [])
                                                                             + ([] if c.ok else c.patterns)))
                                        for c in spawned.checks))

    def test_a_users_error_is_exit_2_on_every_rank(self) -> None:
        if shutil.which("mpiexec") is None:
            self.skipTest("no mpiexec (scripts/setup.sh installs MPICH)")
        slow = os.path.join(HERE, "launched", "slow.py")
        p = subprocess.run(["mpiexec", "-n", "2", sys.executable, "-m", "collgrad_torch", "check",
                            f"{slow}:raises_on_1", "--inputs", f"{slow}:make_inputs", "--world", "launched"],
                           env=_env(), capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 2, p.stdout[-3000:] + p.stderr[-3000:])
        self.assertIn("rank 1 failed during analytic pass (fn and backward): TypeError: planted on rank 1", p.stdout)

    def test_a_lost_node_ends_every_rank(self) -> None:
        mark = os.path.join(self.tmp, "marks")
        os.makedirs(mark)
        slow = os.path.join(HERE, "launched", "slow.py")
        args = ["-m", "collgrad_torch", "check", f"{slow}:slow_sum", "--inputs", f"{slow}:make_inputs",
                "--world", "launched", "--timeout", "60"]
        env = _env(COLLGRAD_TEST_MARK=mark)
        first = _torchrun(29440, args, env, os.path.join(self.tmp, "node0.log"))
        time.sleep(2)   # the first agent holds the rendezvous's store, and rank 0
        second = _torchrun(29440, args, env, os.path.join(self.tmp, "node1.log"))
        deadline = time.monotonic() + 300
        while len(os.listdir(mark)) < 4 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.2)
        self.assertEqual(len(os.listdir(mark)), 4, _text(os.path.join(self.tmp, "node0.log"))[-3000:])
        second.send_signal(signal.SIGKILL)   # the agent alone: its ranks must notice and go
        killed = time.monotonic()
        second.wait()
        code = first.wait(timeout=120)
        took = time.monotonic() - killed
        log = _text(os.path.join(self.tmp, "node0.log"))
        self.assertNotEqual(code, 0, log[-3000:])
        self.assertLess(took, 60, "within the check's timeout")
        self.assertIn("lost 2 of 4 ranks", log, log[-3000:])
        lost = [ln for ln in log.splitlines() if ln.strip().startswith("rank ") and " on " in ln and "last seen" in ln]
        self.assertEqual(sorted(ln.split()[1] for ln in lost), ["2", "3"], log[-3000:])
        self.assertTrue(all("(node 1)" in ln for ln in lost), lost)
        time.sleep(2)
        self.assertEqual(_ours(slow), [], "nothing left running")

    def test_no_launcher_is_exit_2(self) -> None:
        env = {k: v for k, v in _env().items() if k not in ("RANK", "WORLD_SIZE", "PMI_RANK", "SLURM_PROCID")}
        p = subprocess.run([sys.executable, "-m", "collgrad_torch", "check", f"{DATA_PARALLEL}:ddp_step",
                            "--world", "launched"], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no launcher's variables are set here", p.stderr)


if __name__ == "__main__":
    unittest.main()
