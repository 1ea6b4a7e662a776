"""examples/user_code through collgrad_torch.check at W=2 and 4: every correct
example passes, every buggy one fails with the pattern its docstring names, and
the seed documents' numbers come out as the documents print them (the truths
worked out by hand in each example's docstring). The DTensor examples, which
need torch 2.x, are usercode_torch2.py."""

import importlib.util
import os
import sys
import unittest
from typing import Any, Dict, List, Optional

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "user_code")
sys.path.insert(0, EXAMPLES)

import collgrad_torch as cg  # noqa: E402
from collgrad_core import patterns  # noqa: E402


# (module, function, check() arguments, expected status, a pattern every wrong check names,
#  or one per world)
CASES: List[Any] = [
    ("seed_allreduce", "sum_nn", {}, "pass", None),
    ("seed_allreduce", "sum_c10d", {}, "fail", patterns.REPLICATED),
    ("seed_allreduce", "product_nn", {}, "fail", patterns.OWN_LOSS),
    ("seed_gatherlayer", "blog_gatherlayer", {}, "fail", patterns.REPLICATED),
    ("seed_gatherlayer", "simclr_gatherlayer", {}, "pass", None),
    ("seed_gatherlayer", "diffdist_gather", {}, "pass", None),
    ("subgroup", "pair_all_reduce", {}, "pass", None),
    ("subgroup", "pair_all_reduce_twice", {}, "fail", {2: patterns.TIMES_W, 4: "x 2: a group's size"}),
    ("subgroup", "pair_dp_step", {"step": True, "inputs": "make_pair_dp_inputs"}, "pass", None),
    ("subgroup", "pair_dp_step_no_sync", {"step": True, "inputs": "make_pair_dp_inputs"}, "fail", patterns.PARTIAL),
    ("all_to_all", "uneven", {}, "pass", None),
    ("megatron_tp", "tp_mlp", {"semantics": "replicated"}, "pass", None),
    ("megatron_tp", "tp_mlp_identity_backward", {"semantics": "replicated"}, "fail", patterns.PARTIAL),
    ("megatron_tp", "tp_mlp_discarded_copy", {"semantics": "replicated"}, "fail", patterns.PARTIAL),
    ("megatron_tp", "sp_mlp", {"inputs": "make_sp_inputs"}, "pass", None),
    ("megatron_tp", "sp_mlp_double_reduce", {"inputs": "make_sp_inputs"}, "fail", patterns.TIMES_W),
    ("moe", "moe", {}, "pass", None),
    ("moe", "moe_expert_grad_doubled", {}, "fail", patterns.TIMES_W),
    ("data_parallel", "ddp_step", {"step": True, "reduction": "mean"}, "pass", None),
    ("data_parallel", "allreduce_step_no_divide", {"step": True, "reduction": "mean"}, "fail", patterns.TIMES_W),
    ("custom_function", "wrong_cube", {}, "fail", "no known pattern"),
]
WORLDS = [int(w) for w in (os.environ.get("CG_USERCODE_WORLDS") or "2,4").split(",")]
# one warm world per world size for the whole module: the ranks start once, not once per check
WARM = cg.warm_worlds()


def setUpModule() -> None:
    WARM.__enter__()


def tearDownModule() -> None:
    WARM.__exit__(None, None, None)
    print(f"warm worlds: {WARM.starts()} start(s) of rank processes for all the checks", file=sys.stderr)


def run(module: str, name: str, world: int, args: Dict[str, Any]) -> cg.Result:
    args = dict(args)
    path = os.path.join(EXAMPLES, module + ".py")
    inputs = f"{path}:{args.pop('inputs', 'make_inputs')}"
    if args.pop("step", False):
        return cg.check(step=f"{path}:{name}", world=world, inputs=inputs, timeout=120, **args)
    return cg.check(f"{path}:{name}", world=world, inputs=inputs, timeout=120, **args)


class Examples(unittest.TestCase):
    def setUp(self) -> None:
        if os.environ.get("CG_USERCODE_VIA_PYTEST") == "1" and importlib.util.find_spec("pytest"):
            self.skipTest("ctest python_usercode_pytest checks these examples, with these expectations, "
                          "through the pytest plugin")

    def _case(self, module: str, name: str, args: Dict[str, Any], status: str, pattern: Any) -> None:
        for world in WORLDS:
            with self.subTest(world=world):
                r = run(module, name, world, args)
                self.assertEqual(r.status, status, r.table())
                want = pattern.get(world) if isinstance(pattern, dict) else pattern
                for c in r.checks:
                    if not c.ok:
                        self.assertTrue(any(want in p for p in c.patterns), r.table())

for _module, _name, _args, _status, _pattern in CASES:
    def _test(self: Examples, m: str = _module, n: str = _name, a: Dict[str, Any] = _args, s: str = _status,
              p: Any = _pattern) -> None:
        self._case(m, n, a, s, p)
    setattr(Examples, f"test_{_module}_{_name}", _test)


class SeedNumbers(unittest.TestCase):
    """The documents' numbers, at W=2 (the truths from the math in the docstrings)."""

    def numbers(self, module: str, name: str) -> List[List[float]]:
        r = run(module, name, 2, {})
        return [[c.observed[0], c.truth[0]] for c in r.checks]

    def test_58005_product(self) -> None:
        # seeds/002: torch.distributed.nn prints 12 and 18; the truth is 30 and 30
        got = self.numbers("seed_allreduce", "product_nn")
        for (o, t), (eo, et) in zip(got, [(12, 30), (18, 30)]):
            self.assertAlmostEqual(o, eo, places=9)
            self.assertAlmostEqual(t, et, places=5)

    def test_58005_sum_c10d(self) -> None:
        # seeds/002, first snippet: per-rank 40 and 60; the plain c10d all_reduce gives 20 and 30
        got = self.numbers("seed_allreduce", "sum_c10d")
        for (o, t), (eo, et) in zip(got, [(20, 40), (30, 60)]):
            self.assertAlmostEqual(o, eo, places=9)
            self.assertAlmostEqual(t, et, places=5)

    def test_blog_gatherlayer(self) -> None:
        # seeds/003: the post prints 6 and 9; the truth is 12 and 18
        got = self.numbers("seed_gatherlayer", "blog_gatherlayer")
        for (o, t), (eo, et) in zip(got, [(6, 12), (9, 18)]):
            self.assertAlmostEqual(o, eo, places=9)
            self.assertAlmostEqual(t, et, places=5)


if __name__ == "__main__":
    unittest.main()
