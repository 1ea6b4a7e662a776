"""Warm worlds (issue 36 item 2): inside warm_worlds(), checks reuse one set of
rank processes per (world size, backend), each check in a fresh process group;
a check that raised or hung ends its world and the next check starts a fresh
one, so nothing leaks from one check into the next."""

import os
import subprocess
import sys
import textwrap
import time
import unittest

import collgrad_torch as cg

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "usercode_bad.py")
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "user_code")
SEED = os.path.join(EXAMPLES, "seed_allreduce.py")
BOUND = os.path.join(HERE, "usercode_bound.py")
# usercode_bound's functions (it cannot be imported here: it makes groups at import)
BOUND_FUNCTIONS = ["broadcast", "reduce", "all_reduce", "all_gather", "gather", "all_to_all", "all_to_all_single",
                   "on_import_group", "on_import_mesh"]


def bad(fn: str, **kw: object) -> cg.Result:
    return cg.check(f"{BAD}:{fn}", world=2, inputs=f"{BAD}:make_inputs", **kw)  # type: ignore[arg-type]


def seed(fn: str) -> cg.Result:
    return cg.check(f"{SEED}:{fn}", world=2, inputs=f"{SEED}:make_inputs")


class Warm(unittest.TestCase):
    def test_checks_share_one_world_and_give_the_same_numbers(self) -> None:
        with cg.warm_worlds() as warm:
            first = seed("sum_c10d")
            again = [seed(fn) for fn in ("sum_nn", "sum_c10d", "product_nn")]
            self.assertEqual(warm.starts(), 1)
        # seeds/002's first snippet: c10d all_reduce gives 20 and 30, the per-rank truth 40 and 60
        for r in (first, again[1]):
            self.assertEqual(r.status, "fail", r.table())
            self.assertEqual([c.observed[0] for c in r.checks], [20.0, 30.0])
            self.assertEqual([round(c.truth[0], 6) for c in r.checks], [40.0, 60.0])
        self.assertEqual([r.status for r in again], ["pass", "fail", "fail"])
        # #58005's product: 12 and 18 against 30 and 30
        self.assertEqual([c.observed[0] for c in again[2].checks], [12.0, 18.0])

    def test_groups_of_one_check_do_not_reach_the_next(self) -> None:
        with cg.warm_worlds() as warm:
            made = bad("makes_a_group")
            after = bad("sees_only_its_own_groups")
            self.assertEqual(warm.starts(), 1)
        self.assertEqual(made.status, "pass", made.table())
        self.assertEqual(after.status, "pass", after.table())

    def test_code_bound_to_the_first_checks_group_runs_as_in_a_cold_world(self) -> None:
        # issue 52 item 6: torch.distributed.nn's default group=group.WORLD, a new_group and a
        # DeviceMesh made at import bound the first check's group; from the second check on, the
        # warm world raised "Group ... is not registered" (reduce, all_to_all) or an assertion
        # inside torch (all_gather) where a cold world passes. Each function is right, so the
        # truth is every check passing, all in the one world
        with cg.warm_worlds() as warm:
            results = {fn: cg.check(f"{BOUND}:{fn}", world=2, inputs=f"{BOUND}:make_inputs")
                       for fn in BOUND_FUNCTIONS}
            self.assertEqual(warm.starts(), 1, {fn: r.error for fn, r in results.items()})
        for fn, r in results.items():
            self.assertEqual(r.status, "pass", f"{fn}: {r.error or r.table()}")

    def test_the_cli_checks_two_functions_of_one_module_as_cold(self) -> None:
        # the command of issue 52 item 6: two torch.distributed.nn.reduce functions in one command
        # (warm by default) gave the first PASS and the second exit 2
        out = subprocess.run([sys.executable, "-m", "collgrad_torch", "check", f"{BOUND}:reduce",
                              f"{BOUND}:gather", "--inputs", f"{BOUND}:make_inputs", "--world", "2"],
                             capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, PYTHONPATH=os.path.dirname(HERE)))
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_an_error_replaces_the_world_and_the_next_check_runs(self) -> None:
        with cg.warm_worlds() as warm:
            self.assertEqual(seed("sum_nn").status, "pass")
            r = bad("raises_on_rank_1")
            self.assertEqual((r.status, r.error_class), ("error", 2), r.table())
            self.assertIn("ValueError: rank 1 does not like its input", r.error or "")
            after = seed("sum_nn")
            self.assertEqual(after.status, "pass", after.table())
            self.assertEqual(warm.starts(), 2)

    def test_a_hang_is_named_and_the_next_check_runs(self) -> None:
        with cg.warm_worlds() as warm:
            self.assertEqual(seed("sum_nn").status, "pass")
            t0 = time.monotonic()
            r = bad("hangs", timeout=3)
            self.assertLess(time.monotonic() - t0, 20)  # warm: no start-up allowance
            self.assertEqual((r.status, r.error_class), ("error", 3), r.table())
            self.assertRegex(r.error or "", r"rank 0: analytic pass .* waits in all_reduce, called from "
                                            r".*usercode_bad\.py:\d+ \(hangs\)")
            after = seed("sum_nn")
            self.assertEqual(after.status, "pass", after.table())
            self.assertEqual(warm.starts(), 2)

    def test_a_rank_that_dies_is_named_and_the_next_check_runs(self) -> None:
        with cg.warm_worlds() as warm:
            self.assertEqual(seed("sum_nn").status, "pass")
            t0 = time.monotonic()
            r = bad("dies_on_rank_1", timeout=30)
            self.assertLess(time.monotonic() - t0, 20)  # named when it dies, not at the timeout
            self.assertEqual((r.status, r.error_class), ("error", 3), r.table())
            self.assertTrue((r.error or "").startswith("rank 1's process ended during analytic pass (fn and "
                                                       "backward) without a result or an error: killed by "
                                                       "signal 9 (SIGKILL)"), r.error)
            after = seed("sum_nn")
            self.assertEqual(after.status, "pass", after.table())
            self.assertEqual(warm.starts(), 2)

    def test_ranks_leave_when_their_owner_dies(self) -> None:
        # the owner runs one check in a warm world and exits without closing it
        code = textwrap.dedent(f"""
            import os, sys
            sys.path.insert(0, {os.path.dirname(HERE)!r})
            import collgrad_torch as cg
            w = cg.warm_worlds().__enter__()
            r = cg.check({SEED + ':sum_nn'!r}, world=2, inputs={SEED + ':make_inputs'!r})
            print(r.status, list(w.worlds.values())[0].dir, flush=True)
            os._exit(0)
        """)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        status, pool_dir = out.stdout.split()
        self.assertEqual(status, "pass", out.stderr)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _ranks_serving(pool_dir):
            time.sleep(0.2)
        self.assertEqual(_ranks_serving(pool_dir), [])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and os.path.exists(pool_dir):
            time.sleep(0.1)
        self.assertFalse(os.path.exists(pool_dir), "the dead owner's warm world left its directory")


def _ranks_serving(pool_dir: str) -> list:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if pool_dir.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


if __name__ == "__main__":
    unittest.main()
