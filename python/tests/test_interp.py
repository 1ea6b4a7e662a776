"""The interpreter on one rank (world 1, a real gloo group in this process)
against values worked out by hand from the case language's definitions.
The cases are exported by the built collgrad-check ($COLLGRAD_CHECK), so the
IR is exactly what the C parser produces."""

import datetime
import json
import math
import os
import subprocess
import tempfile
import unittest

import torch
import torch.distributed as dist

from collgrad_core import ir, rng
from collgrad_torch.runner import apis, interp, ops

_TMP = tempfile.mkdtemp(prefix="collgrad-torch-test-")


def setUpModule():
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    store = dist.FileStore(os.path.join(_TMP, "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=30))


def export(text: str, world: int = 1) -> ir.Case:
    binary = os.environ.get("COLLGRAD_CHECK")
    if not binary:
        raise unittest.SkipTest("COLLGRAD_CHECK (the built tool) is not set")
    path = os.path.join(_TMP, "t.case")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    out = subprocess.run([binary, "export-ir", "--world", str(world), path], capture_output=True, text=True,
                         check=True)
    return ir.parse(out.stdout).cases[0]


def run(text: str, api: str = "nn") -> interp.Rank:
    case = export(text)
    r = interp.Rank(case, 0, 1, apis.make(api, dist.group.WORLD, "gloo"))
    r.run()
    return r


def values(t):
    return t.detach().to(torch.float64).reshape(-1).tolist()


class InterpTest(unittest.TestCase):
    def test_a_square_and_its_gradient(self):
        r = run("case a\nworld 1\nx = param([1, 2, 3])\ny = sum(x * x)\nbackward(y)\n")
        self.assertEqual(values(r.env["y"]), [14.0])
        self.assertEqual(values(r.env["x"].grad), [2.0, 4.0, 6.0])
        self.assertEqual(values(r.env["y"].grad), [1.0])  # named tensors keep their gradient

    def test_scalars_follow_ieee_not_python(self):
        r = run("case s\nworld 1\na = full(1 / 0, 1)\nb = full(-1 / 0, 1)\nc = full(7 % 4, 1)\n"
                "d = full(2 ** 10, 1)\ne = full(rank == 0 ? 5 : 6, 1)\n")
        self.assertEqual(values(r.env["a"]), [math.inf])
        self.assertEqual(values(r.env["b"]), [-math.inf])
        self.assertEqual(values(r.env["c"]), [3.0])
        self.assertEqual(values(r.env["d"]), [1024.0])
        self.assertEqual(values(r.env["e"]), [5.0])

    def test_shapes_slices_and_splits(self):
        r = run("case sh\nworld 1\nm = [[1, 2, 3], [4, 5, 6]]\nt = transpose(m)\nv = reshape(m, 3, 2)\n"
                "s = slice(m, 1, 1, 3)\nrow = m[1]\nhead = m[0:1]\nc = cat(m, m, axis=1)\n"
                "p, q = arange(4)\ne = eye(2, 3, 1)\n")
        self.assertEqual(list(r.env["t"].shape), [3, 2])
        self.assertEqual(values(r.env["t"]), [1, 4, 2, 5, 3, 6])
        self.assertEqual(values(r.env["v"]), [1, 2, 3, 4, 5, 6])
        self.assertEqual(values(r.env["s"]), [2, 3, 5, 6])
        self.assertEqual(values(r.env["row"]), [4, 5, 6])
        self.assertEqual(values(r.env["head"]), [1, 2, 3])
        self.assertEqual(list(r.env["c"].shape), [2, 6])
        self.assertEqual(values(r.env["p"]), [0, 1])
        self.assertEqual(values(r.env["q"]), [2, 3])
        self.assertEqual(values(r.env["e"]), [0, 1, 0, 0, 0, 1])

    def test_reductions_and_log_softmax(self):
        r = run("case r\nworld 1\nm = [[1, 2], [3, 4]]\na = sum(m)\nb = mean(m, 0)\nc = logsumexp(m)\n"
                "d = log_softmax(m)\n")
        self.assertEqual(values(r.env["a"]), [10.0])
        self.assertEqual(values(r.env["b"]), [2.0, 3.0])
        self.assertAlmostEqual(values(r.env["c"])[0], math.log(sum(math.exp(v) for v in (1, 2, 3, 4))), 12)
        row = math.log(math.exp(1) + math.exp(2))
        self.assertAlmostEqual(values(r.env["d"])[0], 1 - row, 12)

    def test_loss_ops(self):
        # sqrt([4, 9]) = [2, 3]; norm([3, 4]) = 5; softmax([0, ln 3]) = [1/4, 3/4];
        # cross_entropy([[0, ln 3]], [1]) = -ln(3/4), its gradient softmax - onehot
        r = run("case l\nworld 1\na = sqrt([4, 9])\nb = norm([3, 4])\nc = softmax([0, 1.0986122886681098])\n"
                "z = param([[0, 1.0986122886681098]])\nce = cross_entropy(z, [1])\nbackward(ce)\n")
        self.assertEqual(values(r.env["a"]), [2.0, 3.0])
        self.assertAlmostEqual(values(r.env["b"])[0], 5.0, 14)
        for got, want in zip(values(r.env["c"]), [0.25, 0.75]):
            self.assertAlmostEqual(got, want, 14)
        self.assertAlmostEqual(values(r.env["ce"])[0], -math.log(0.75), 14)
        for got, want in zip(values(r.env["z"].grad), [0.25, -0.25]):
            self.assertAlmostEqual(got, want, 14)

    def test_cross_entropy_refuses_labels_that_are_not_classes(self):
        # the C side refuses such a case before export; torch's side says the same
        r = run("case l\nworld 1\nz = param([[0, 1]])\nce = cross_entropy(z, [1])\n")
        node = r.case.program[1]["expr"]
        logits = torch.zeros(1, 2, dtype=torch.float64)
        for labels, why in (([0.5], "got 0.5 at 0"), ([2.0], "got 2 at 0")):
            with self.assertRaises(interp.CaseError) as ctx:
                ops.cross_entropy(r, node, logits, torch.tensor(labels, dtype=torch.float64))
            self.assertIn(f"expected class labels in 0..1, {why}", str(ctx.exception))

    def test_chunk_and_split_stack_equal_pieces(self):
        r = run("case c\nworld 1\nx = arange(6)\nc = chunk(x, 3)\ns = split(x, 3)\n")
        self.assertEqual(list(r.env["c"].shape), [3, 2])
        self.assertEqual(values(r.env["c"]), [0, 1, 2, 3, 4, 5])
        self.assertEqual(list(r.env["s"].shape), [2, 3])

    def test_gelu_is_x_times_the_normal_cdf(self):
        """gelu(x) = x Phi(x), gelu'(x) = Phi(x) + x phi(x); Phi(1) and phi(1) from the tables."""
        phi_cdf, phi_pdf = 0.8413447460685429, 0.24197072451914337
        r = run("case g\nworld 1\nx = param([-1, 0, 1])\ny = gelu(x)\nbackward(sum(y))\n")
        for got, want in zip(values(r.env["y"]), [-(1 - phi_cdf), 0.0, phi_cdf]):
            self.assertAlmostEqual(got, want, places=14)
        for got, want in zip(values(r.env["x"].grad), [(1 - phi_cdf) - phi_pdf, 0.5, phi_cdf + phi_pdf]):
            self.assertAlmostEqual(got, want, places=14)

    def test_backward_accumulates_and_zero_grad_drops(self):
        r = run("case z\nworld 1\nx = param(ones(2))\ny = x * 3\nbackward(sum(y))\nbackward(sum(y))\n")
        self.assertEqual(values(r.env["x"].grad), [6.0, 6.0])
        r = run("case z2\nworld 1\nx = param(ones(2))\ny = x * 3\nbackward(sum(y))\nzero_grad()\n"
                "backward(sum(y * y))\n")
        self.assertEqual(values(r.env["x"].grad), [18.0, 18.0])

    def test_one_element_operands_broadcast_to_the_other_shape(self):
        r = run("case b\nworld 1\nm = ones(2, 2)\nk = [[3]]\ny = m * k\n")
        self.assertEqual(list(r.env["y"].shape), [2, 2])

    def test_inputs_round_to_the_case_dtype_through_float32(self):
        r = run("case h\nworld 1\ndtype bf16\nx = [0.1]\n")
        self.assertEqual(r.env["x"].dtype, torch.bfloat16)
        want = torch.tensor(0.1, dtype=torch.float64).to(torch.float32).to(torch.bfloat16)
        self.assertEqual(values(r.env["x"]), [float(want)])

    def test_random_inputs_are_the_rng_streams(self):
        case = export("case rr\nworld 1\nseed 11\nx = rand(3)\ny = randn(2)\n")
        r = interp.Rank(case, 0, 1, apis.make("nn", dist.group.WORLD, "gloo"))
        r.run()
        kx, ky = rng.key(11, 0, "x#0"), rng.key(11, 0, "y#0")
        self.assertEqual(values(r.env["x"]), [rng.uniform(kx, i, "f64") for i in range(3)])
        self.assertEqual(values(r.env["y"]), [rng.normal(ky, i) for i in range(2)])

    def test_collectives_at_world_one_are_identities(self):
        r = run("case c\nworld 1\nx = param([1, 2])\ny = all_reduce(x, sum)\ng = all_gather(x)\n"
                "b = broadcast(x, 0)\nbackward(sum(y) + sum(g) + sum(b))\n", api="nn")
        self.assertEqual(values(r.env["y"]), [1.0, 2.0])
        self.assertEqual(values(r.env["g"]), [1.0, 2.0])
        self.assertEqual(values(r.env["x"].grad), [3.0, 3.0])

    def test_groups_at_world_one(self):
        # group([0]) and mesh([1, 1]) at W = 1: every group is the one rank,
        # group rank 0 of size 1; a call on a group is the call of a world of
        # one (an identity), and `on g` runs its block here
        r = run("case g\nworld 1\ng = group([0])\ntp, dp = mesh([1, 1])\nx = param([1, 2])\n"
                "y = all_reduce(x, sum, group=g)\nb = broadcast(y, 0, group=dp)\n"
                "n = full(group_rank(tp) * 10 + group_size(g), 1)\non g { z = sum(b) }\n"
                "backward(sum(b) * 3)\n", api="nn")
        self.assertEqual(values(r.env["y"]), [1.0, 2.0])
        self.assertEqual(values(r.env["n"]), [1.0])
        self.assertEqual(values(r.env["z"]), [3.0])
        self.assertEqual(values(r.env["x"].grad), [3.0, 3.0])
        self.assertEqual([g.members for g in r.groups.values()], [[0], [0], [0]])

    def test_an_api_without_groups_refuses_a_group_program(self):
        case = export("case h\nworld 1\ng = group([0])\nx = param([1])\nbackward(sum(x))\n")
        r = interp.Rank(case, 0, 1, apis.make("c10d", dist.group.WORLD, "gloo"))
        with self.assertRaisesRegex(Exception, "process groups"):
            r.run()

    def test_c10d_outputs_of_out_of_place_collectives_carry_no_gradient(self):
        case = export("case d\nworld 1\nx = param([1, 2])\ng = all_gather(x)\nbackward(sum(g))\n")
        r = interp.Rank(case, 0, 1, apis.make("c10d", dist.group.WORLD, "gloo"))
        with self.assertRaisesRegex(RuntimeError, "does not require grad"):
            r.run()
        self.assertEqual(r.phase, "backward")

    def test_an_ir_of_another_schema_is_refused(self):
        with self.assertRaises(ir.IRError):
            ir.parse(json.dumps({"schema": "collgrad-check/ir/0", "cases": []}))
        with self.assertRaises(ir.IRError):
            ir.parse("not json")

    def test_op_and_root_come_from_the_tools_table(self):
        """reduce takes its root at 1 and its op at 2: the document's table says
        so (the tool's coll_words.h), and a call read by it gets both right."""
        text = "case r\nworld 1\nx = param([2, 3])\ny = reduce(x, 0, max)\nbackward(sum(y))\n"
        case = export(text)
        row = case.collectives["reduce"]
        self.assertEqual((row.root, row.op, row.root_only_output, row.p2p), (1, 2, True, False))
        self.assertEqual((case.collectives["all_reduce"].op, case.collectives["all_reduce"].root), (1, None))
        self.assertTrue(case.collectives["send"].p2p)
        r = interp.Rank(case, 0, 1, apis.make("nn", dist.group.WORLD, "gloo"))
        r.run()
        self.assertEqual(r.env["y"].tolist(), [2.0, 3.0])

    def test_a_plan_calling_a_collective_the_table_lacks_is_refused(self):
        doc = {"schema": ir.SCHEMA, "world": 1, "collectives": {}, "ops": {},
               "cases": [{"name": "c", "dtype": "f64", "seed": "1", "program": [],
                          "plan": [{"seq": 0, "kind": "all_reduce", "rank": -1, "tag": -1, "shapes": [[2]]}]}]}
        with self.assertRaisesRegex(ir.IRError, "the plan calls all_reduce, which the IR's table"):
            ir.parse(json.dumps(doc))
        doc["collectives"] = {"all_reduce": {"op": 1}}
        with self.assertRaisesRegex(ir.IRError, "table of collectives is malformed"):
            ir.parse(json.dumps(doc))

    def test_the_package_runs_exactly_the_tools_ops(self):
        """Every row of the tool's op table (harness/lang/op_table.h, exported as "ops") has an
        entry here of the same class, and nothing here is missing from the table."""
        case = export("case o\nworld 1\nx = param([1])\nbackward(x)\n")
        self.assertGreater(len(case.ops), 30)
        self.assertEqual(ops.entries(), {name: op.cls for name, op in case.ops.items()})
        self.assertEqual(ops.missing(case.ops), [])
        newer = dict(case.ops, erf=ir.Op("erf", "unary", 1, 1, None, "same", "any", "smooth"))
        self.assertEqual(ops.missing(newer), ["erf"])
        wrong_class = dict(case.ops, exp=ir.Op("exp", "call", 1, 1, None, "same", "any", "smooth"))
        self.assertEqual(ops.missing(wrong_class), ["exp"])
        self.assertEqual((case.ops["log"].domain, case.ops["relu"].diff, case.ops["sum"].keyword),
                         ("positive", "kink0", "axis"))


if __name__ == "__main__":
    unittest.main()
