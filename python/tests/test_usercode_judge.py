"""The user-code check's arithmetic without processes: the finite-difference
schedule and derivatives, replicated semantics' detection, the verdicts and
the patterns, on rank results written by hand from the math."""

import re
import unittest

from collgrad_core import patterns
from collgrad_torch.checker import fd, judge
from collgrad_core.errors import CheckError
from collgrad_core.result import Result


def _results(losses_per_rank, grads_per_rank, metas, base=None):
    out = []
    for k, (losses, grads) in enumerate(zip(losses_per_rank, grads_per_rank)):
        b = base[k] if base else [0.0, 0.0, 0.0]
        out.append({"rank": k, "mode": "element", "meta": metas[k], "grads": grads, "dirs": {},
                    "rounds": [{"step": fd.STEP, "diffs": None, "losses": losses}], "base": b, "groups": [], "notes": [], "data": [], "values": {}})
    return out


def _meta(name, n, rep=False):
    return {"name": name, "shape": [n], "numel": n, "replicated": rep}


class Schedule(unittest.TestCase):
    def test_per_rank_then_replicated(self):
        metas = [[_meta("x", 2), _meta("w", 1, True)], [_meta("x", 3), _meta("w", 1, True)]]
        ts = fd.logicals(metas)
        self.assertEqual([(t.name, t.owner, t.numel) for t in ts], [("x", 0, 2), ("x", 1, 3), ("w", -1, 1)])
        self.assertEqual(len(fd.schedule(ts, "element")), 4 * 6)   # x +- h, x +- 2h per element
        self.assertEqual(len(fd.schedule(ts, "fast")), 4 * 3)

    def test_replicated_must_agree(self):
        with self.assertRaises(fd.FdError):
            fd.logicals([[_meta("w", 2, True)], [_meta("w", 3, True)]])

    def test_group_held_copies_are_one_logical_per_group(self):
        # W=4, a (2, 2) layout: ranks 0, 2 hold one slice of "b", ranks 1, 3 another (HSDP's
        # (Replicate, Shard)); "x" is each rank's own
        metas = [[_meta("x", 1), dict(_meta("b", 2, True), holders=[k % 2, k % 2 + 2])] for k in range(4)]
        ts = fd.logicals(metas)
        self.assertEqual([(t.name, t.owner, t.holders) for t in ts],
                         [("x", 0, [0]), ("x", 1, [1]), ("x", 2, [2]), ("x", 3, [3]),
                          ("b", -1, [0, 2]), ("b", -1, [1, 3])])

    def test_group_held_copies_must_agree(self):
        metas = [[dict(_meta("b", 2, True), holders=[0, 1])], [dict(_meta("b", 3, True), holders=[0, 1])]]
        with self.assertRaises(fd.FdError):
            fd.logicals(metas)
        with self.assertRaises(fd.FdError):  # rank 1 does not say it holds a copy
            fd.logicals([[dict(_meta("b", 2, True), holders=[0, 1])], [_meta("b", 2)]])

    def test_direction_is_unit_and_repeatable(self):
        a, b = fd.direction(3, 1, 10), fd.direction(3, 1, 10)
        self.assertTrue(bool((a == b).all()))
        self.assertAlmostEqual(float(a.norm()), 1.0, places=12)


class Seed002Product(unittest.TestCase):
    """W=2, x_r = 1: L_0 = 2*6*x0*x1 = 12 x0 x1, L_1 = 18 x0 x1 (the PRODUCT snippet).
    The losses at x0 = 1 +- h (x1 = 1) and x1 = 1 +- h, written from that formula."""

    def setUp(self):
        h = fd.STEP
        L0 = lambda a, b: 12 * a * b
        L1 = lambda a, b: 18 * a * b
        pts = [(1 + o * h, 1) for o in fd.OFFSETS] + [(1, 1 + o * h) for o in fd.OFFSETS]
        self.metas = [[_meta("x", 1)], [_meta("x", 1)]]
        self.losses = [[L0(*p) for p in pts], [L1(*p) for p in pts]]
        self.base = [[12.0] * 3, [18.0] * 3]

    def judged(self, g0, g1, **kw):
        r = Result(name="t", world=2, backend="gloo", kind="fn", semantics=kw.get("semantics", "auto"),
                   reduction=kw.get("reduction", "sum"))
        judge.judge(_results(self.losses, [{"x": [g0]}, {"x": [g1]}], self.metas, self.base), r)
        return r

    def test_truth_is_30_and_30(self):
        r = self.judged(30.0, 30.0)
        self.assertTrue(r.ok)
        self.assertAlmostEqual(r.checks[0].truth[0], 30.0, places=4)
        self.assertFalse(r.replicated_defined)

    def test_nn_numbers_are_own_loss(self):
        r = self.judged(12.0, 18.0)
        self.assertFalse(r.ok)
        for c in r.checks:
            self.assertIn(patterns.OWN_LOSS, c.patterns)

    def test_mean_reduction_halves_the_truth(self):
        r = self.judged(15.0, 15.0, reduction="mean")
        self.assertTrue(r.ok)

    def test_replicated_semantics_refused_when_losses_differ(self):
        with self.assertRaises(judge.Refused):
            self.judged(12.0, 18.0, semantics="replicated")

    def test_non_repeatable_forward_refused(self):
        self.base[1] = [18.0, 18.0, 18.5]
        with self.assertRaisesRegex(judge.Refused, "non-deterministic forward: rank 1"):
            self.judged(30.0, 30.0)

    def test_non_finite_loss_refused_as_such(self):
        # nan at the point: not "non-deterministic" (nan != nan), and not judged
        self.base[1] = [float("nan")] * 3
        with self.assertRaisesRegex(judge.Refused, r"rank 1's loss at the inputs is not finite: nan, nan, nan"):
            self.judged(30.0, 30.0)
        self.base[1] = [18.0, float("inf"), 18.0]
        with self.assertRaisesRegex(judge.Refused, r"rank 1's loss at the inputs is not finite: 18.0, inf, 18.0"):
            self.judged(30.0, 30.0)

    def test_non_finite_finite_differences_refused(self):
        # rank 1's loss is nan at x1 = 1 + h (a sqrt at the edge of its domain, say):
        # d L_1/d x1 is no truth, and nan must not reach the verdicts (nan > tol is False)
        self.losses[1][len(fd.OFFSETS)] = float("nan")
        with self.assertRaisesRegex(judge.Refused, r"^finite differences are not finite along x\[0\] "
                                                   r"\(rank 1's\): the derivative of rank 1's loss there "
                                                   r"measured nan"):
            self.judged(30.0, 30.0)

    def test_a_nan_gradient_is_named(self):
        # once: "no known pattern: ... observed nan, truth 4" (torch.where over a sqrt(-x) branch)
        r = self.judged(float("nan"), 30.0)
        self.assertFalse(r.ok)
        bad = [c for c in r.checks if not c.ok]
        self.assertEqual([c.rank for c in bad], [0])
        self.assertEqual(len(bad[0].patterns), 1)
        self.assertTrue(bad[0].patterns[0].startswith("not finite: the gradient is nan at element 0, where "
                                                      "finite differences give 30"), bad[0].patterns)
        self.assertEqual(patterns.key(bad[0].patterns[0]), "non_finite")


class CliExitStatus(unittest.TestCase):
    def result(self, error_class=0, modes=()):
        r = Result(name="t", world=2, backend="gloo", kind="fn", semantics="auto", reduction="sum")
        if error_class:
            r.error, r.error_class = "it could not run", error_class
        r.modes = list(modes)
        return r

    def test_a_mode_that_cannot_run_is_no_wrong_gradient(self):
        # once: eager passing and inductor's "torch 1.13 has no torch.compile" exited 1, "wrong gradients"
        from collgrad_core import cli_words as cli

        self.assertEqual(cli.exit_status([self.result()]), 0)
        self.assertEqual(cli.exit_status([self.result(modes=[self.result(error_class=2)])]), 2)
        self.assertEqual(cli.exit_status([self.result(), self.result(modes=[self.result(error_class=3)])]), 3)
        self.assertEqual(cli.exit_status([self.result(error_class=2)]), 2)


class OptionsDefinedOnce(unittest.TestCase):
    """check()'s options live in check_options.CheckOptions (issue 63 item 5):
    check()'s spelled-out signature (for editors) matches its fields, and the
    CLI, the pytest marker and shrink() take what the fields say."""

    def test_the_signature_is_the_fields(self):
        import dataclasses
        import inspect

        from collgrad_torch.checker import check, check_options

        params = inspect.signature(check).parameters
        fields = {f.name: f for f in dataclasses.fields(check_options.CheckOptions)}
        self.assertEqual([p for p in params if p != "fn"], list(fields))
        for name, f in fields.items():
            with self.subTest(option=name):
                self.assertEqual(params[name].default, f.default)
                self.assertEqual(params[name].kind, inspect.Parameter.KEYWORD_ONLY)

    def test_the_cli_has_a_flag_per_field(self):
        from collgrad_torch.checker import check_options, cli

        flags = {a.dest for a in cli.parser()._actions}
        for f in check_options.fields("cli"):
            self.assertIn(f.name, flags)
        self.assertEqual({"python", "roots"} & flags, set())  # the fields marked cli=False

    def test_validated_once_with_one_line(self):
        from collgrad_torch.checker import check_options

        for bad, words in ((dict(fd="slow"), "fd must be 'auto', 'element' or 'fast', got 'slow'"),
                           (dict(semantics="global"), "semantics must be 'auto', 'per_rank' or 'replicated'"),
                           (dict(atol=float("nan")), "atol must be a finite number >= 0"),
                           (dict(seed=-1), "seed must be an integer in 0.."),
                           (dict(modes=["eager", "eager"]), "modes must be a list of distinct names"),
                           (dict(replicated=[""]), "replicated must be True, False, or input names")):
            with self.subTest(**{k: repr(v) for k, v in bad.items()}):
                with self.assertRaisesRegex(CheckError, re.escape(words)):
                    check_options.of(**bad).validated()
        with self.assertRaisesRegex(CheckError, "check\\(\\) has no option fd_budjet"):
            check_options.of(fd_budjet=3)
        self.assertEqual(check_options.of(replicated="model").validated().replicated, ("model",))

    def test_shrink_refuses_what_it_cannot_carry(self):
        from collgrad_torch.checker import shrinking

        with self.assertRaisesRegex(CheckError, "does not take modes"):
            shrinking.shrink("m.py:f", world=2, modes=["eager", "inductor"])


class CliHelp(unittest.TestCase):
    def test_every_option_says_what_it_does_and_its_default(self):
        # issue 63: --atol, --rtol, --seed and --semantics once had no words in check --help
        from collgrad_torch.checker import cli

        for action in cli.parser()._actions:
            if action.dest == "help":
                continue
            with self.subTest(option=action.option_strings or action.dest):
                self.assertTrue(action.help, "no description")
                d = action.default
                if d is None or d is False or not action.option_strings or isinstance(d, list):
                    continue
                shown = {str(d), f"{d:g}"} if isinstance(d, (int, float)) else {str(d)}
                self.assertTrue("default" in action.help or any(f"({v})" in action.help for v in shown)
                                or any(v in action.help.split(",")[0] for v in shown), action.help)


class ReportFiles(unittest.TestCase):
    def test_a_write_that_fails_names_the_file_and_leaves_nothing(self):
        import os
        import tempfile

        from collgrad_core import report

        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, "report.json")
            os.mkdir(target)  # a directory where the report goes: the rename fails
            with self.assertRaisesRegex(OSError, "report.json: ") as caught:
                report.write_text(target, "{}")
            self.assertNotIn(".tmp", str(caught.exception))  # once: the temporary name
            self.assertEqual(os.listdir(tmp), ["report.json"])  # no temporary file left behind


class Patterns(unittest.TestCase):
    close = staticmethod(patterns.close_within(1e-5, 1e-3))

    def test_scalings(self):
        t = [1.0, -2.0, 3.0]
        self.assertIn(patterns.TIMES_W, patterns.name([4.0, -8.0, 12.0], t, self.close, 4, []))
        self.assertIn(patterns.OVER_W, patterns.name([0.25, -0.5, 0.75], t, self.close, 4, []))
        self.assertIn(patterns.ZERO, patterns.name([0.0, 0.0, 0.0], t, self.close, 4, []))
        self.assertIn(patterns.NEGATED, patterns.name([-1.0, 2.0, -3.0], t, self.close, 4, []))
        by_group = patterns.name([2.0, -4.0, 6.0], t, self.close, 4, [2])
        self.assertTrue(any(p.startswith("x 2: a group's size") for p in by_group))

    def test_unknown_names_the_largest_difference(self):
        p = patterns.name([1.0, -2.0, 7.0], [1.0, -2.0, 3.0], self.close, 4, [])
        self.assertEqual(len(p), 1)
        self.assertIn("no known pattern", p[0])
        self.assertIn("element 2: observed 7, truth 3", p[0])


if __name__ == "__main__":
    unittest.main()


class ErrorBound(unittest.TestCase):
    """fd_error: a difference's bound from the math of its points, and the three verdicts."""

    def test_truncation_is_measured_by_the_second_step(self):
        from collgrad_core import fd_error

        # L = x^3 at x = 1: D(h) = 3 + h^2, D(2h) = 3 + 4 h^2; the bound covers D(h)'s error h^2
        h = 1e-2
        m = fd_error.measure([[(1 + o * h) ** 3 for o in fd_error.OFFSETS]], h)
        self.assertAlmostEqual(m.rows[0], 3 + h * h, places=12)
        self.assertGreaterEqual(m.errors[0], abs(m.rows[0] - 3.0))
        self.assertAlmostEqual(m.errors[0] - fd_error.ROUNDING * 2 / (2 * h), 3 * h * h, places=9)

    def test_rounding_grows_with_the_loss_and_shrinks_with_the_step(self):
        from collgrad_core import fd_error

        big = fd_error.measure([[1e7 + o * 1e-6 for o in fd_error.OFFSETS]], 1e-6)
        self.assertGreater(big.errors[0], 1e-3)          # eps 1e7 / 1e-6: no tolerance of 1e-3 holds
        self.assertFalse(fd_error.resolved(big, 1e-5, 1e-3))
        wide = fd_error.measure([[1e7 + o * 1e-4 for o in fd_error.OFFSETS]], 1e-4)
        self.assertTrue(fd_error.resolved(wide, 1e-5, 1e-3))

    def test_three_verdicts(self):
        from collgrad_core import fd_error

        # truth 1, tolerance 1e-5 + 1e-3, bound 0.05: 1.0005 right, 1.02 unknown, 1.1 and nan wrong
        wrong, unsure = fd_error.verdicts([1.0005, 1.02, 1.1, float("nan")], [1.0] * 4, [0.05] * 4, 1e-5, 1e-3)
        self.assertEqual((wrong, unsure), ([2, 3], [1]))


class ZeroCandidates(unittest.TestCase):
    """Issue 60 item 7: a candidate truth that is zero wherever the truth is not
    (rank 0's loss does not depend on x) explains a zero gradient no better than
    "x 0"; nan gradients are alike, not diverging."""

    def test_a_zero_replicated_candidate_is_not_a_match(self):
        close = patterns.close_within(1e-5, 1e-3)
        found = patterns.name([0.0, 0.0], [2.0, 3.0], close, 2, [], replicated=[0.0, 0.0], own=[0.0, 0.0])
        self.assertEqual(found[0], patterns.ZERO)
        self.assertNotIn(patterns.REPLICATED, found)
        self.assertNotIn(patterns.OWN_LOSS, found)

    def test_nan_copies_are_alike(self):
        close = patterns.close_within(1e-5, 1e-3)
        nan = float("nan")
        self.assertTrue(patterns.alike([1.0, nan], [1.0, nan], close))
        self.assertFalse(patterns.alike([1.0, nan], [1.0, 2.0], close))
        found = patterns.copies([(0, [1.0, nan]), (1, [1.0, nan])], [1.0, 0.0], close)
        self.assertFalse(any(p.startswith(patterns.DIVERGED) for p in found), found)


class PooledFactor(unittest.TestCase):
    """Issue 60 item 15: a tensor of one element off by the factor the check's
    other tensors show is named by it (one element alone has any factor)."""

    def test_one_element_takes_the_factor_of_the_rest(self):
        h = fd.STEP
        coef = [1.0, 2.0, 3.0, 5.0]   # L = a0 + 2 a1 + 3 a2 + 5 b0 at a = b = 1: the truth is coef
        losses = [[11.0 + c * o * h for c in coef for o in fd.OFFSETS]]
        metas = [[_meta("a", 3), _meta("b", 1)]]
        res = _results(losses, [{"a": [3.0, 6.0, 9.0], "b": [15.0]}], metas, [[11.0] * 3])
        r = Result(name="t", world=1, backend="gloo", kind="fn", semantics="auto", reduction="sum")
        judge.judge(res, r)
        a, b = r.checks
        self.assertTrue(a.patterns[0].startswith("x 3: a constant factor"), a.patterns)
        self.assertTrue(b.patterns[0].startswith("x 3: a constant factor"), b.patterns)
        self.assertTrue(b.patterns[0].endswith(patterns.POOLED), b.patterns)
        self.assertEqual(patterns.key(b.patterns[0]), "constant_factor")

    def test_an_accumulation_count_is_read_before_the_world_it_equals(self):
        close = patterns.close_within(1e-5, 1e-3)
        found = patterns.name([2.0, 4.0], [1.0, 2.0], close, 2, [], accumulation=2)
        self.assertEqual(found[0], patterns.accumulated(2))
        self.assertIn(patterns.TIMES_W, found[1:])
        self.assertEqual(patterns.name([2.0, 4.0], [1.0, 2.0], close, 2, [])[0], patterns.TIMES_W)


class DivergedReplicas(unittest.TestCase):
    """W=2, one replicated w (both copies move together), L_k = c_k * w with c = (1, 3): the truth is
    4 on both ranks. Copies that got 1 and 3 diverge and sum to it; 8 and 8 is x W, alike."""

    def judged(self, g0, g1):
        h = fd.STEP
        metas = [[_meta("w", 1, True)], [_meta("w", 1, True)]]
        losses = [[c * (1 + o * h) for o in fd.OFFSETS] for c in (1, 3)]
        res = _results(losses, [{"w": [g0]}, {"w": [g1]}], metas, [[1.0] * 3, [3.0] * 3])
        for x in res:
            x["values"] = {"w": [1.0]}
        r = Result(name="t", world=2, backend="gloo", kind="fn", semantics="auto", reduction="sum")
        judge.judge(res, r)
        return r

    def test_diverging_copies_named_with_their_values(self):
        r = self.judged(1.0, 3.0)
        self.assertFalse(r.ok)
        for c in r.checks:
            self.assertAlmostEqual(c.truth[0], 4.0, places=5)
            self.assertTrue(c.patterns[0].startswith(patterns.DIVERGED), c.patterns)
            self.assertIn("rank 0 1, rank 1 3", c.patterns[0])
            self.assertIn(patterns.PARTIAL, c.patterns)
            self.assertEqual(patterns.key(c.patterns[0]), "replicas_diverge")

    def test_equal_copies_do_not_diverge(self):
        r = self.judged(8.0, 8.0)
        for c in r.checks:
            self.assertNotIn(patterns.PARTIAL, c.patterns)
            self.assertFalse(any(p.startswith(patterns.DIVERGED) for p in c.patterns))
            self.assertIn(patterns.TIMES_W, c.patterns)


class DTensorLoss(unittest.TestCase):
    """A loss that is a DTensor says its semantics: Replicate on every rank is one logical loss
    (L = 2 w, held by both ranks of W=2: truth 2, not 4); copies held by groups of 2 of W=4 count
    once per group (L_k = (k // 2 + 1) w: the global loss is 1 w + 2 w, truth 3)."""

    def judged(self, world, coeff, copies, grads):
        h = fd.STEP
        metas = [[_meta("w", 1, True)] for _ in range(world)]
        losses = [[coeff(k) * (1 + o * h) for o in fd.OFFSETS] for k in range(world)]
        res = _results(losses, [{"w": [g]} for g in grads], metas, [[float(coeff(k))] * 3 for k in range(world)])
        for k, x in enumerate(res):
            x["values"], x["loss_copies"] = {"w": [1.0]}, copies(k)
        r = Result(name="t", world=world, backend="gloo", kind="fn", semantics="auto", reduction="sum")
        judge.judge(res, r)
        return r

    def test_replicate_loss_is_one_loss(self):
        r = self.judged(2, lambda k: 2, lambda k: [0, 1], [2.0, 2.0])
        self.assertTrue(r.ok, r.table())
        self.assertEqual(r.semantics, "replicated")
        self.assertAlmostEqual(r.checks[0].truth[0], 2.0, places=5)

    def test_copies_over_a_group_count_once(self):
        r = self.judged(4, lambda k: k // 2 + 1, lambda k: [k // 2 * 2, k // 2 * 2 + 1], [3.0] * 4)
        self.assertTrue(r.ok, r.table())
        self.assertEqual(r.semantics, "auto")
        self.assertAlmostEqual(r.checks[0].truth[0], 3.0, places=5)

    def test_losses_of_different_kinds_refused(self):
        with self.assertRaises(judge.Refused):
            self.judged(2, lambda k: 2, lambda k: [0, 1] if k == 0 else [1], [2.0, 2.0])


class TensorParallelContract(unittest.TestCase):
    """A plain loss every rank computes alike (L_k = 2 w for the one w both ranks of W=2 hold):
    W losses, truth 4, unless a framework's tensor-parallel contract says the model's ranks
    compute one logical loss (marks.py), then truth 2. The seed's torch.distributed.nn all_reduce
    (sum_nn) has the same numbers and no contract: it stays per-rank."""

    def judged(self, contract, grads, semantics="auto", coeff=lambda k: 2):
        h = fd.STEP
        metas = [[_meta("w", 1, True)] for _ in range(2)]
        losses = [[coeff(k) * (1 + o * h) for o in fd.OFFSETS] for k in range(2)]
        res = _results(losses, [{"w": [g]} for g in grads], metas, [[float(coeff(k))] * 3 for k in range(2)])
        for x in res:
            x["values"], x["contract"] = {"w": [1.0]}, contract
        r = Result(name="t", world=2, backend="gloo", kind="fn", semantics=semantics, reduction="sum")
        judge.judge(res, r)
        return r

    def test_a_contract_makes_one_loss(self):
        r = self.judged("Megatron-core's tensor-parallel layers", [2.0, 2.0])
        self.assertTrue(r.ok, r.table())
        self.assertEqual(r.semantics, "replicated")
        self.assertAlmostEqual(r.checks[0].truth[0], 2.0, places=5)
        self.assertTrue(any("Megatron-core" in n and "one logical loss" in n for n in r.notes), r.notes)

    def test_no_contract_stays_per_rank(self):
        r = self.judged("", [2.0, 2.0])
        self.assertFalse(r.ok)
        self.assertEqual(r.semantics, "auto")
        self.assertAlmostEqual(r.checks[0].truth[0], 4.0, places=5)
        self.assertIn(patterns.REPLICATED, r.checks[0].patterns)

    def test_asked_per_rank_stays_per_rank(self):
        r = self.judged("Megatron-core's tensor-parallel layers", [4.0, 4.0], semantics="per_rank")
        self.assertTrue(r.ok, r.table())
        self.assertEqual(r.semantics, "per_rank")

    def test_losses_that_differ_stay_per_rank(self):
        # L_k = (k + 1) w: not one function, so no contract makes them one loss: truth 1 + 2
        r = self.judged("Megatron-core's tensor-parallel layers", [3.0, 3.0], coeff=lambda k: k + 1)
        self.assertTrue(r.ok, r.table())
        self.assertEqual(r.semantics, "auto")
        self.assertAlmostEqual(r.checks[0].truth[0], 3.0, places=5)


class ConstantFactor(unittest.TestCase):
    def close(self, a, b):
        return all(abs(x - y) <= 1e-9 + 1e-6 * abs(y) for x, y in zip(a, b))

    def test_any_constant_is_named_when_no_count_is(self):
        # 4 = the microbatch count, not W=2 nor a group's size
        p = patterns.name([4.0, -8.0, 12.0], [1.0, -2.0, 3.0], self.close, 2, [])
        self.assertEqual(p, [f"x 4: {patterns.FACTOR}"])
        self.assertEqual(patterns.key(p[0]), "constant_factor")

    def test_one_element_has_no_factor(self):
        p = patterns.name([4.0], [1.0], self.close, 2, [])
        self.assertTrue(p[0].startswith("no known pattern"), p)


class ReproInputs(unittest.TestCase):
    def test_a_group_replica_keeps_its_group_in_a_reproduction(self):
        import torch

        from collgrad_torch.checker import inputs

        t = torch.ones(2, dtype=torch.float64, requires_grad=True)
        d = inputs.describe({"w": inputs.replicated(t, group=[2, 3]), "v": inputs.replicated(t), "x": t})
        self.assertEqual((d["w"]["replicated"], d["v"]["replicated"], d["x"]["replicated"]), ([2, 3], True, False))
