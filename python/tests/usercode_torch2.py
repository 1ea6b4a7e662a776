"""examples/user_code's torch 2.x programs (DTensor over a DeviceMesh, torch.compile modes) through
collgrad_torch.check at W=2 and 4, asserting what each measured torch version
did (ctest: python_usercode_torch2, run with the venv of scripts/torch2-venv.sh;
exit 77, skipped with the reason, on torch 1.13)."""

import os
import sys
import unittest
from typing import Any, Dict, List

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from usercode_examples import run  # noqa: E402
import collgrad_torch as cg  # noqa: E402
from collgrad_core import patterns  # noqa: E402

TORCH2 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 4)


def _public_dtensor() -> bool:
    """DTensor's public module (torch.distributed.tensor's Replicate, Shard, Partial), which the
    examples import: 2.15.0 has it, 2.4.1 keeps them private (tests/torch/findings-zoo.txt)."""
    try:
        from torch.distributed.tensor import Partial, Replicate, Shard  # noqa: F401
    except ImportError:
        return False
    return True


DTENSOR = TORCH2 and _public_dtensor()
NO_DTENSOR = f"the DTensor examples need torch.distributed.tensor's public DTensor; this is torch {torch.__version__}"

# DTensor's behaviour, by measurement (torch MAJOR.MINOR -> function, arguments, status, pattern):
# each listed torch version is asserted; another 2.x only prints what it did (a new finding to list)
DTENSOR_MEASURED: Dict[str, List[Any]] = {
    "2.15": [("redistribute_replicate", {}, "fail", patterns.OWN_LOSS),
             ("full_tensor", {}, "fail", patterns.OWN_LOSS),
             ("redistribute_same_loss", {}, "fail", patterns.REPLICATED),
             ("redistribute_same_loss", {"semantics": "replicated"}, "pass", None)],
}

# torch.compile modes, by measurement (examples/user_code/compiled.py): torch MAJOR.MINOR ->
# function -> each mode's status at W=2 and 4 (gloo, CPU), every mode against the eager truth
MODES = ["eager", "aot_eager", "inductor"]
COMPILE_MEASURED: Dict[str, Dict[str, Dict[str, str]]] = {
    "2.15": {"funcol_all_gather": {"eager": "pass", "aot_eager": "pass", "inductor": "pass"},
             "ulysses_all_to_all": {"eager": "pass", "aot_eager": "pass", "inductor": "pass"}},
}


class CompileModes(unittest.TestCase):
    def setUp(self) -> None:
        if not TORCH2:
            self.skipTest(f"torch.compile modes need torch 2.x; this is torch {torch.__version__}")

    def test_examples(self) -> None:
        version = ".".join(torch.__version__.split(".")[:2])
        measured = COMPILE_MEASURED.get(version)
        for name in COMPILE_MEASURED["2.15"]:
            for world in (2, 4):
                r = run("compiled", name, world, {"modes": MODES})
                got = {m.mode: m.status for m in r.all()}
                if measured is None:
                    print(f"\ntorch {torch.__version__} (not measured before; list it in COMPILE_MEASURED): "
                          f"{name} W={world}: {got}")
                    continue
                with self.subTest(name=name, world=world):
                    self.assertEqual(got, measured[name], r.table())
                    for m in r.modes:  # the collective itself was compiled: one graph, no break
                        self.assertIn(f"rank 0: under {m.mode}: dynamo compiled 1 graph(s) with 0 graph break(s)",
                                      m.notes, r.table())
                    if r.ok:  # the truth from the docstring's math, for every mode
                        for m in r.all():
                            for c in m.checks:
                                x = [v + 10 * c.rank for v in range(1, 2 * world + 1)]
                                if name == "funcol_all_gather":
                                    want = [world * (world + 1) * v for v in x]
                                else:
                                    want = [2 * (i // 2 + 1) * v for i, v in enumerate(x)]
                                for o, t in zip(c.observed, want):
                                    self.assertAlmostEqual(o, t, places=6)

    def test_a_mode_that_disagrees_is_named(self) -> None:
        # compile_doubles (tests/usercode_modes2.py) doubles its forward only while compiling:
        # eager passes, aot_eager is x 2 = x W at W=2, and the forward differs too
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "usercode_modes2.py")
        r = cg.check(f"{path}:compile_doubles", world=2, inputs=f"{path}:make_inputs",
                     modes=["eager", "aot_eager"], timeout=120)
        self.assertEqual([m.status for m in r.all()], ["pass", "fail"], r.table())
        self.assertEqual(r.disagreeing(), ["aot_eager"])
        self.assertFalse(r.ok)
        self.assertIn(patterns.TIMES_W, r.modes[0].checks[0].patterns)
        self.assertTrue(any("the forward differs too" in n for n in r.modes[0].notes), r.table())
        self.assertIn("disagreeing: aot_eager", r.table())


# DTensor inputs (examples/user_code/dtensor_inputs.py), by measurement: torch MAJOR.MINOR ->
# (function, make_inputs, status, pattern); the truths are checked against the docstring's math
DTENSOR_INPUTS_MEASURED: Dict[str, List[Any]] = {
    "2.15": [("shard_redistribute", "make_shard_inputs", "fail", patterns.OWN_LOSS),
             ("replicate_weight", "make_replicate_inputs", "fail", patterns.PARTIAL),
             ("partial_sum", "make_partial_inputs", "fail", patterns.OWN_LOSS)],
}


def dtensor_input_truth(name: str, rank: int, world: int) -> List[float]:
    full = [float(v) for v in range(2 * world)]
    if name == "shard_redistribute":
        return [world * (world + 1) * v for v in full[2 * rank:2 * rank + 2]]
    if name == "replicate_weight":  # one logical w (DTensor's contract): d(sum_k L_k)/dw on every rank
        return [world * (world + 1) * v for v in full]
    whole = [sum(v / world + k for k in range(world)) for v in full]  # partial_sum: the ranks' v_k summed
    return [world * (world + 1) * v for v in whole]


class DTensorInputs(unittest.TestCase):
    def test_dtensor_inputs(self) -> None:
        if not DTENSOR:
            self.skipTest(NO_DTENSOR)
        version = ".".join(torch.__version__.split(".")[:2])
        measured = DTENSOR_INPUTS_MEASURED.get(version)
        for name, make, status, pattern in DTENSOR_INPUTS_MEASURED["2.15"]:
            for world in (2, 4):
                r = run("dtensor_inputs", name, world, {"inputs": make})
                if measured is None:
                    print(f"\ntorch {torch.__version__} (not measured before; list it in "
                          f"DTENSOR_INPUTS_MEASURED):\n{r.table()}")
                    continue
                want = next(m for m in measured if m[0] == name)
                with self.subTest(name=name, world=world):
                    self.assertEqual(r.status, want[2], r.table())
                    self.assertEqual(len(r.checks), world)
                    for c in r.checks:
                        for t, e in zip(c.truth, dtensor_input_truth(name, c.rank, world)):
                            self.assertAlmostEqual(t, e, places=5)
                        if not c.ok:
                            self.assertIn(want[3], c.patterns, r.table())


WARM = cg.warm_worlds()  # one start of rank processes per world size for the module


def setUpModule() -> None:
    WARM.__enter__()


def tearDownModule() -> None:
    WARM.__exit__(None, None, None)


class DTensorExamples(unittest.TestCase):
    def test_dtensor(self) -> None:
        if not DTENSOR:
            self.skipTest(NO_DTENSOR)
        version = ".".join(torch.__version__.split(".")[:2])
        measured = DTENSOR_MEASURED.get(version)
        for name, args, status, pattern in DTENSOR_MEASURED["2.15"]:
            for world in (2, 4):
                r = run("dtensor_redistribute", name, world, args)
                if measured is None:
                    print(f"\ntorch {torch.__version__} (not measured before; list it in DTENSOR_MEASURED):\n{r.table()}")
                    continue
                want = next(m for m in measured if m[0] == name and m[1] == args)
                with self.subTest(name=name, world=world, args=args):
                    self.assertEqual(r.status, want[2], r.table())
                    for c in r.checks:
                        if not c.ok:
                            self.assertIn(want[3], c.patterns, r.table())



if __name__ == "__main__":
    unittest.main()
