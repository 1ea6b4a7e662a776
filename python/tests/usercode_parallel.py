"""examples/user_code/parallel/ (issue 51): real torch 2.x tensor- and sequence-parallel code
through collgrad_torch.check at W=2 and 4, each verdict AND each truth the check used set
against a single-process reference written here: the same math on the full logical tensors,
autograd in one process, no collectives, no code of the check's (ctest:
python_usercode_parallel, with the venv of scripts/torch2-venv.sh; exit 77 on torch 1.13).

DTensor's contract decides what a number means: a Replicate parameter is one logical tensor,
a Shard parameter's local part is its slice of the logical one."""

import importlib.util
import os
import sys
import unittest
from typing import Dict, List

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import collgrad_torch as cg  # noqa: E402
from collgrad_core import patterns  # noqa: E402

# the examples use the public APIs of torch 2.6 (torch.distributed.tensor, fsdp.fully_shard,
# pipelining's scale_grads); 2.4 kept them private (tests/torch/findings-zoo.txt)
TORCH2 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 6)
PARALLEL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "examples", "user_code", "parallel")
sys.path.insert(0, PARALLEL)  # the examples import each other (fsdp_step uses tp_mlp's MLP)


def _example(name: str):  # type: ignore[no-untyped-def]
    """The example module, for its data and weights only (its functions need a group)."""
    spec = importlib.util.spec_from_file_location(f"parallel_{name}", os.path.join(PARALLEL, f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tp_mlp_reference(world: int) -> Dict[int, Dict[str, List[float]]]:
    """d L / d theta of (mlp(x)^2).sum() on one nn.Module with the full weights, cut into
    each rank's local part as ColwiseParallel / RowwiseParallel place them: up.weight and
    up.bias Shard(0), down.weight Shard(1), down.bias Replicate (the whole)."""
    ex = _example("tp_mlp")
    model = ex.mlp_module()
    (model(ex.data()) ** 2).sum().backward()
    h = ex.H // world
    out: Dict[int, Dict[str, List[float]]] = {}
    for r in range(world):
        rows = slice(r * h, (r + 1) * h)
        out[r] = {"model.up.weight": model.up.weight.grad[rows].reshape(-1).tolist(),
                  "model.up.bias": model.up.bias.grad[rows].tolist(),
                  "model.down.weight": model.down.weight.grad[:, rows].reshape(-1).tolist(),
                  "model.down.bias": model.down.bias.grad.tolist()}
    return out


def sp_norm_reference(world: int) -> Dict[str, List[List[float]]]:
    """The logical weight's gradient of sum_r sum((x_r g)^2), and each rank's own rows' part."""
    ex = _example("sp_norm")
    g = ex.weight().requires_grad_()
    ((ex.data() * g) ** 2).sum().backward()
    parts = []
    for rows in ex.data().chunk(world):
        gr = ex.weight().requires_grad_()
        ((rows * gr) ** 2).sum().backward()
        parts.append(gr.grad.tolist())
    return {"truth": [g.grad.tolist()], "parts": parts}


def row_parallel_reference(world: int) -> Dict[int, Dict[str, List[float]]]:
    """The layer y = x W^T + b in one process: W's gradient cut into each rank's columns, b's whole."""
    ex = _example("row_parallel")
    w, b = ex.weight().requires_grad_(), ex.bias().requires_grad_()
    ((ex.data() @ w.t() + b) ** 2).sum().backward()
    cols = ex.D_IN // world
    return {r: {"w": w.grad[:, r * cols:(r + 1) * cols].reshape(-1).tolist(), "b": b.grad.tolist()}
            for r in range(world)}


def _mlp_grads(batches: List[torch.Tensor]) -> Dict[str, torch.Tensor]:
    """d/d theta of the mean over `batches` of (mlp(x_b)^2).sum(), on one nn.Module with the full
    weights: the gradient data-parallel training averages."""
    ex = _example("fsdp_step")
    model = ex.mlp()
    (sum((model(x) ** 2).sum() for x in batches) / len(batches)).backward()
    return {f"model.{n}": p.grad for n, p in model.named_parameters()}


def fsdp_reference(world: int) -> Dict[int, Dict[str, List[float]]]:
    """FSDP2 over a 1-D mesh: each parameter Shard(0), rank r's local part its chunk r of rows;
    the gradient the mean over the ranks' batches."""
    grads = _mlp_grads(list(_example("fsdp_step").data().chunk(world)))
    return {r: {n: g.chunk(world)[r].reshape(-1).tolist() for n, g in grads.items()} for r in range(world)}


def hsdp_reference() -> Dict[int, Dict[str, List[float]]]:
    """HSDP on (replicate=2, shard=2): (Replicate(), Shard(0)), rank r (coordinates (r // 2, r % 2))
    holds chunk r % 2 of rows, as rank r + 2 or r - 2 does; the mean over the four batches."""
    grads = _mlp_grads(list(_example("fsdp_step").data().chunk(4)))
    return {r: {n: g.chunk(2)[r % 2].reshape(-1).tolist() for n, g in grads.items()} for r in range(4)}


def fsdp_tp_reference() -> Dict[int, Dict[str, List[float]]]:
    """FSDP2 + TP on (dp=2, tp=2), rank r at (dp, tp) = (r // 2, r % 2), batch dp's, the mean over
    the two dp batches. up (ColwiseParallel, then fully_shard: tp's chunk of rows, dp's half of
    it), down.weight (dp's rows, tp's columns), down.bias (dp's half, whole over tp)."""
    grads = _mlp_grads(list(_example("fsdp_step").data().chunk(2)))
    out: Dict[int, Dict[str, List[float]]] = {}
    for r in range(4):
        dp, tp = r // 2, r % 2
        up_rows = slice(tp * 4 + dp * 2, tp * 4 + dp * 2 + 2)
        out[r] = {"model.up.weight": grads["model.up.weight"][up_rows].reshape(-1).tolist(),
                  "model.up.bias": grads["model.up.bias"][up_rows].tolist(),
                  "model.down.weight": grads["model.down.weight"][dp * 2:dp * 2 + 2, tp * 4:tp * 4 + 4]
                  .reshape(-1).tolist(),
                  "model.down.bias": grads["model.down.bias"][dp * 2:dp * 2 + 2].tolist()}
    return out


def fsdp_tp_body_reference() -> Dict[int, Dict[str, List[float]]]:
    """fsdp_tp_reference's layout for up and down, on the MLP with a body Linear the TP plan leaves
    out: body's parameters Shard(0) over dp alone, rank r holding chunk r // 2 of rows, as the other
    rank of its tp group does."""
    ex = _example("fsdp_tp_step")
    model = ex.mlp_with_body()
    batches = list(_example("fsdp_step").data().chunk(2))
    (sum((model(x) ** 2).sum() for x in batches) / len(batches)).backward()
    grads = {f"model.{n}": p.grad for n, p in model.named_parameters()}
    out: Dict[int, Dict[str, List[float]]] = {}
    for r in range(4):
        dp, tp = r // 2, r % 2
        up_rows = slice(tp * 4 + dp * 2, tp * 4 + dp * 2 + 2)
        out[r] = {"model.up.weight": grads["model.up.weight"][up_rows].reshape(-1).tolist(),
                  "model.up.bias": grads["model.up.bias"][up_rows].tolist(),
                  "model.down.weight": grads["model.down.weight"][dp * 2:dp * 2 + 2, tp * 4:tp * 4 + 4]
                  .reshape(-1).tolist(),
                  "model.down.bias": grads["model.down.bias"][dp * 2:dp * 2 + 2].tolist(),
                  "model.body.weight": grads["model.body.weight"].chunk(2)[dp].reshape(-1).tolist(),
                  "model.body.bias": grads["model.body.bias"].chunk(2)[dp].tolist()}
    return out


def loss_parallel_reference(world: int) -> Dict[int, Dict[str, List[float]]]:
    """Cross entropy of one nn.Linear over the full vocabulary; head.weight and head.bias are
    Shard(0) (ColwiseParallel): rank r holds chunk r of the vocabulary's rows."""
    ex = _example("loss_parallel")
    model = ex.head()
    torch.nn.functional.cross_entropy(model(ex.data()), ex.labels()).backward()
    return {r: {"model.weight": model.weight.grad.chunk(world)[r].reshape(-1).tolist(),
                "model.bias": model.bias.grad.chunk(world)[r].tolist()} for r in range(world)}


def moe_ep_reference(world: int) -> Dict[int, Dict[str, List[float]]]:
    """Every rank's tokens through their experts in one process (no dispatch): each token
    times its expert's full weight, the losses summed; experts Shard(0): rank r hosts row r."""
    ex = _example("moe_ep")
    w = ex.experts(world).requires_grad_()
    xs = [ex.tokens(r).requires_grad_() for r in range(world)]
    total = sum(((torch.stack([x[t] @ w[e] for t, e in enumerate(ex.route(r, world))])) ** 2).sum()
                for r, x in enumerate(xs))
    total.backward()
    return {r: {"experts": w.grad[r].reshape(-1).tolist(), "x": xs[r].grad.reshape(-1).tolist()}
            for r in range(world)}


def pipeline_reference(world: int) -> Dict[int, Dict[str, List[float]]]:
    """The whole model on the whole batch in one process, its MSE; stage r's parameters are
    layers stage_layers(r) of it, named as the stage's Sequential names them (stage.0, stage.2)."""
    ex = _example("pipeline")
    full = ex.model()
    F = torch.nn.functional
    F.mse_loss(full(ex.data()), ex.target()).backward()
    out: Dict[int, Dict[str, List[float]]] = {}
    for r in range(world):
        out[r] = {}
        for i, layer in enumerate(ex.stage_layers(r, world)):
            lin = full[2 * layer]
            out[r][f"stage.{2 * i}.weight"] = lin.weight.grad.reshape(-1).tolist()
            out[r][f"stage.{2 * i}.bias"] = lin.bias.grad.tolist()
    return out


def ring_attention_reference(world: int) -> Dict[int, Dict[str, List[float]]]:
    """Plain softmax attention of the full Q, K, V in one process, each rank's loss the energy
    of its rows of the output, summed; each gradient cut into the ranks' rows."""
    ex = _example("ring_attention")
    q, k, v = (ex.full(n, world).requires_grad_() for n in ("q", "k", "v"))
    out = torch.softmax(q @ k.t() / ex.D ** 0.5, dim=1) @ v
    (out ** 2).sum().backward()
    return {r: {n: t.grad[r * ex.S:(r + 1) * ex.S].reshape(-1).tolist() for n, t in (("q", q), ("k", k), ("v", v))}
            for r in range(world)}


class ParallelZoo(unittest.TestCase):
    def setUp(self) -> None:
        if not TORCH2:
            self.skipTest(f"the parallel examples use torch >= 2.6's APIs; this is torch {torch.__version__}")

    def assertClose(self, got: List[float], want: List[float], what: str) -> None:
        self.assertEqual(len(got), len(want), what)
        for g, w in zip(got, want):
            self.assertAlmostEqual(g, w, delta=1e-6 * max(1.0, abs(w)), msg=what)

    def check(self, module: str, fn: str, world: int, semantics: str) -> cg.Result:
        path = os.path.join(PARALLEL, f"{module}.py")
        return cg.check(f"{path}:{fn}", world=world, inputs=f"{path}:make_inputs", semantics=semantics,
                        timeout=120)

    def step(self, module: str, fn: str, world: int) -> cg.Result:
        path = os.path.join(PARALLEL, f"{module}.py")
        return cg.check(step=f"{path}:{fn}", world=world, inputs=f"{path}:make_inputs", reduction="mean",
                        timeout=120)

    def assertTruths(self, r: cg.Result, ref: Dict[int, Dict[str, List[float]]], what: str) -> None:
        self.assertEqual(sorted((c.rank, c.tensor) for c in r.checks),
                         sorted((k, n) for k in ref for n in ref[k]), r.error or r.table())
        for c in r.checks:
            self.assertClose(c.truth, ref[c.rank][c.tensor], f"{what}: rank {c.rank} {c.tensor}")

    def test_fsdp_step(self) -> None:
        # FSDP2's averaged step passes; with a divide factor of 1 every parameter is x W
        for world in (2, 4):
            ref = fsdp_reference(world)
            for fn, status in (("step", "pass"), ("step_sum", "fail")):
                with self.subTest(fn=fn, world=world):
                    r = self.step("fsdp_step", fn, world)
                    self.assertEqual(r.status, status, r.error or r.table())
                    self.assertTruths(r, ref, f"{fn} W={world}")
                    for c in r.checks:
                        self.assertFalse(c.replicated, "Shard(0) over the world: each rank's own rows")
                        if fn == "step_sum":
                            self.assertIn(patterns.TIMES_W, c.patterns, r.table())

    def test_loss_parallel(self) -> None:
        # the loss is a Replicate DTensor: one logical loss, replicated semantics without being asked
        for world in (2, 4):
            ref = loss_parallel_reference(world)
            for fn, status in (("step", "pass"), ("step_scaled", "fail")):
                with self.subTest(fn=fn, world=world):
                    path = os.path.join(PARALLEL, "loss_parallel.py")
                    r = cg.check(step=f"{path}:{fn}", world=world, inputs=f"{path}:make_inputs", timeout=120)
                    self.assertEqual(r.status, status, r.error or r.table())
                    self.assertEqual(r.semantics, "replicated", r.table())
                    self.assertTruths(r, ref, f"{fn} W={world}")
                    for c in r.checks:
                        if fn == "step_scaled":
                            self.assertIn(patterns.OVER_W, c.patterns, r.table())

    def test_moe_ep(self) -> None:
        # expert parallelism over all_to_all_single_autograd; expert gradients scaled by the EP
        # degree on a summed loss are x W, the tokens' gradients untouched
        for world in (2, 4):
            ref = moe_ep_reference(world)
            for fn, status in (("step", "pass"), ("step_expert_scaled", "fail")):
                with self.subTest(fn=fn, world=world):
                    path = os.path.join(PARALLEL, "moe_ep.py")
                    r = cg.check(step=f"{path}:{fn}", world=world, inputs=f"{path}:make_inputs", timeout=120)
                    self.assertEqual(r.status, status, r.error or r.table())
                    self.assertTruths(r, ref, f"{fn} W={world}")
                    for c in r.checks:
                        self.assertEqual(c.ok, fn == "step" or c.tensor == "x", r.table())
                        if not c.ok:
                            self.assertIn(patterns.TIMES_W, c.patterns, r.table())
                            self.assertIn("(Shard(0)) on mesh (ep=", c.placements)

    def test_pipeline(self) -> None:
        # GPipe over 4 microbatches, one stage per rank's layers; without scale_grads every
        # stage's gradient is 4 (the microbatch count) times the truth
        for world in (2, 4):
            ref = pipeline_reference(world)
            for inputs, status in (("make_inputs", "pass"), ("make_inputs_unscaled", "fail")):
                with self.subTest(inputs=inputs, world=world):
                    path = os.path.join(PARALLEL, "pipeline.py")
                    r = cg.check(step=f"{path}:step", world=world, inputs=f"{path}:{inputs}", timeout=120)
                    self.assertEqual(r.status, status, r.error or r.table())
                    self.assertTruths(r, ref, f"{inputs} W={world}")
                    for c in r.checks:
                        if status == "fail":
                            self.assertClose(c.observed, [4 * v for v in ref[c.rank][c.tensor]], "x 4")
                            # read first as the schedule's own count (it called backward once per
                            # microbatch, issue 60 item 15), at W=4 also as the world it equals
                            self.assertEqual(c.patterns[0], patterns.accumulated(4), r.table())
                            if world == 4:
                                self.assertIn(patterns.TIMES_W, c.patterns, r.table())

    def test_ring_attention(self) -> None:
        # K/V gradients sent on along the ring instead of back: right at W=2 (the next rank is
        # the previous one), wrong K and V at W=4, Q untouched
        for world in (2, 4):
            ref = ring_attention_reference(world)
            for fn in ("ring", "ring_grad_wrong_way"):
                wrong = fn == "ring_grad_wrong_way" and world > 2
                with self.subTest(fn=fn, world=world):
                    r = self.check("ring_attention", fn, world, "auto")
                    self.assertEqual(r.status, "fail" if wrong else "pass", r.error or r.table())
                    self.assertTruths(r, ref, f"{fn} W={world}")
                    for c in r.checks:
                        self.assertEqual(c.ok, not wrong or c.tensor == "q", r.table())

    def test_hsdp_step(self) -> None:
        # HSDP on (replicate, shard): one slice held by two ranks; the check once said "no known
        # pattern" on every parameter of the correct step
        ref = hsdp_reference()
        for fn, status in (("step", "pass"), ("step_sum", "fail")):
            with self.subTest(fn=fn):
                r = self.step("hsdp_step", fn, 4)
                self.assertEqual(r.status, status, r.error or r.table())
                self.assertTruths(r, ref, fn)
                for c in r.checks:
                    self.assertTrue(c.replicated, "Replicate over the replicate dimension")
                    self.assertEqual(c.over, "replicate", r.table())
                    if fn == "step_sum":
                        self.assertIn(patterns.TIMES_W, c.patterns, r.table())

    def test_fsdp_tp_body_on_the_dp_sub_mesh(self) -> None:
        # issue 60 item 14: a module the TP plan leaves out is Shard(0) on mesh["dp"] alone; the two
        # ranks of each tp group hold copies of one shard and are perturbed together
        ref = fsdp_tp_body_reference()
        path = os.path.join(PARALLEL, "fsdp_tp_step.py")
        r = cg.check(step=f"{path}:step", world=4, inputs=f"{path}:make_inputs_body", reduction="mean", timeout=120)
        self.assertEqual(r.status, "pass", r.error or r.table())
        self.assertTruths(r, ref, "body")
        for c in r.checks:
            if c.tensor.startswith("model.body."):
                self.assertTrue(c.replicated, r.table())
                self.assertEqual(c.over, "tp", r.table())
                self.assertIn("(Shard(0)) on mesh (dp=2)", c.placements)

    def test_fsdp_tp_step(self) -> None:
        # FSDP2 + TP: down.bias is one slice per dp coordinate held by a tp group; the check once
        # said "x 2: a group's size" on it; the bias gradient all-reduced over tp again is x 2 there,
        # naming the mesh dimension
        ref = fsdp_tp_reference()
        for fn, status in (("step", "pass"), ("step_bias_twice", "fail")):
            with self.subTest(fn=fn):
                r = self.step("fsdp_tp_step", fn, 4)
                self.assertEqual(r.status, status, r.error or r.table())
                self.assertTruths(r, ref, fn)
                for c in r.checks:
                    bias = c.tensor == "model.down.bias"
                    self.assertEqual(c.replicated, bias)
                    self.assertEqual(c.ok, fn == "step" or not bias, r.table())
                    if bias:
                        self.assertEqual(c.over, "tp")
                        self.assertIn("(Shard(0), Replicate()) on mesh (dp=2, tp=2)", c.placements)
                    if fn == "step_bias_twice" and bias:
                        self.assertIn(patterns.key(c.patterns[0]), ("times_mesh_dim",), r.table())
                        self.assertIn("mesh dimension 'tp'", c.patterns[0])
                        self.assertClose(c.observed, [2 * v for v in ref[c.rank][c.tensor]], "x tp")

    def test_tp_mlp(self) -> None:
        # the TP-plan MLP passes (the check once said "x W" on down.bias: its copies were perturbed
        # one rank at a time); the bias declared Partial in a computation every rank repeats is
        # x W there alone
        for world in (2, 4):
            ref = tp_mlp_reference(world)
            for fn, status in (("mlp", "pass"), ("mlp_bias_partial", "fail")):
                with self.subTest(fn=fn, world=world):
                    r = self.check("tp_mlp", fn, world, "replicated")
                    self.assertEqual(r.status, status, r.table())
                    self.assertEqual(len(r.checks), 4 * world, r.table())
                    for c in r.checks:
                        self.assertClose(c.truth, ref[c.rank][c.tensor], f"{fn} W={world} rank {c.rank} {c.tensor}")
                        if c.tensor == "model.down.bias":
                            self.assertTrue(c.replicated, "a Replicate parameter is one logical tensor")
                        if fn == "mlp_bias_partial" and c.tensor == "model.down.bias":
                            self.assertFalse(c.ok)
                            self.assertIn(patterns.TIMES_W, c.patterns, r.table())
                            self.assertClose(c.observed, [world * v for v in ref[c.rank][c.tensor]], "x W")
                        else:
                            self.assertTrue(c.ok, f"{fn} W={world}: {c.tensor} on rank {c.rank}\n{r.table()}")

    def test_checkpointed_tp(self) -> None:
        # the TP MLP under torch.utils.checkpoint: non-reentrant passes; reentrant with a data
        # input leaves every parameter without a gradient: x 0
        for world in (2, 4):
            ref = tp_mlp_reference(world)
            for fn, status in (("checkpointed", "pass"), ("checkpointed_reentrant", "fail")):
                with self.subTest(fn=fn, world=world):
                    r = self.check("checkpointed_tp", fn, world, "replicated")
                    self.assertEqual(r.status, status, r.error or r.table())
                    self.assertTruths(r, ref, f"{fn} W={world}")
                    for c in r.checks:
                        if status == "fail":
                            self.assertIn(patterns.ZERO, c.patterns, r.table())

    def test_tp_block_at_scale(self) -> None:
        # item 6: a 12.6M-parameter TP transformer block with fd="fast": the block passes, the
        # bias reduced twice is named alone, x W (scripts/usercode-tp-block.sh times it)
        path = os.path.join(PARALLEL, "tp_block.py")
        args = dict(inputs=f"{path}:make_inputs", fd="fast", semantics="replicated", timeout=300)
        for world in (2, 4):
            with self.subTest(world=world):
                r = cg.check(f"{path}:block", world=world, **args)  # type: ignore[arg-type]
                self.assertEqual(r.status, "pass", r.error or r.table())
                self.assertEqual(len({c.tensor for c in r.checks}), 16)
                bug = cg.check(step=f"{path}:block_bias_twice", world=world, **args)  # type: ignore[arg-type]
                self.assertEqual(bug.status, "fail", bug.error or bug.table())
                bad = [c for c in bug.checks if not c.ok]
                self.assertEqual(sorted((c.rank, c.tensor) for c in bad),
                                 [(k, "block.mlp.down.bias") for k in range(world)], bug.table())
                for c in bad:
                    self.assertIn(patterns.TIMES_W, c.patterns, bug.table())

    def test_row_parallel(self) -> None:
        # the Why's DTensor row-parallel layer: it ended with exit 2 ("replicated semantics is
        # undefined here"), the Replicate bias perturbed on one rank at a time
        for world in (2, 4):
            ref = row_parallel_reference(world)
            with self.subTest(world=world):
                r = self.check("row_parallel", "row_parallel", world, "replicated")
                self.assertEqual(r.status, "pass", r.error or r.table())
                self.assertEqual(len(r.checks), 2 * world, r.table())
                for c in r.checks:
                    self.assertClose(c.truth, ref[c.rank][c.tensor], f"W={world} rank {c.rank} {c.tensor}")
                    self.assertEqual(c.replicated, c.tensor == "b")

    def test_sp_norm(self) -> None:
        # the norm weight through to_local(grad_placements=[Partial()]) passes; through to_local()
        # alone its replicas diverge, each its own rows' part, summing to the truth
        for world in (2, 4):
            ref = sp_norm_reference(world)
            for fn, status in (("norm_partial", "pass"), ("norm_local", "fail")):
                with self.subTest(fn=fn, world=world):
                    r = self.check("sp_norm", fn, world, "per_rank")
                    self.assertEqual(r.status, status, r.table())
                    self.assertEqual(sorted(c.rank for c in r.checks), list(range(world)))
                    for c in r.checks:
                        self.assertTrue(c.replicated)
                        self.assertClose(c.truth, ref["truth"][0], f"{fn} W={world} rank {c.rank}")
                        if fn == "norm_local":
                            # the replicas diverge (named first, with every rank's value) and sum to the truth
                            self.assertTrue(c.patterns[0].startswith(patterns.DIVERGED), r.table())
                            for k in range(world):
                                self.assertIn(f"rank {k} ", c.patterns[0])
                            self.assertIn(patterns.PARTIAL, c.patterns, r.table())
                            self.assertClose(c.observed, ref["parts"][c.rank], f"rank {c.rank}'s own rows")


WARM = cg.warm_worlds()  # one start of rank processes per world size for the module


def setUpModule() -> None:
    WARM.__enter__()


def tearDownModule() -> None:
    WARM.__exit__(None, None, None)


if __name__ == "__main__":
    unittest.main()
