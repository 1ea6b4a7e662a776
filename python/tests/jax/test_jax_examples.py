"""The JAX examples (examples/jax/) at W=2 (one process) and W=4 (two processes
of two devices, jax.distributed: a multi-host program), each device's gradient
block against a single-process truth: the same loss written here on the
full arrays, plain jax.numpy on one device, differentiated by jax.grad.
A right example must pass and match it; a planted bug must fail with its
pattern, and its gradient must be the wrong value the bug's math predicts
(x W, x 1/W, the device's own loss only, a cotangent left on the wrong
device), computed here too."""

import math
import os
import re
import unittest

import jax
import jax.numpy as jnp
import numpy as np

import collgrad_jax as cgj
from collgrad_core import patterns

jax.config.update("jax_enable_x64", True)

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "jax")
WORLDS = (2, 4)


def _load(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"jax_example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _block(full, label):
    """The part of a full array a check's tensor label names: "x[2:4]", "w1[:, 0:2]", or "x" (all of it)."""
    m = re.search(r"\[(.*)\]$", label)
    if not m:
        return np.asarray(full).ravel()
    index = tuple(slice(None) if p.strip() == ":" else slice(*map(int, p.split(":"))) for p in m.group(1).split(","))
    return np.asarray(full)[index].ravel()


def _grads(loss, inputs):
    """jax.grad of loss (its arguments the inputs, in make_inputs' order) on the
    full arrays, one device: the single-process truth."""
    names = list(inputs)
    g = jax.grad(loss, argnums=tuple(range(len(names))))(
        *(jnp.asarray(inputs[n], dtype=jnp.float64) for n in names))
    return dict(zip(names, (np.asarray(x) for x in g)))


class Examples(unittest.TestCase):
    def check(self, example, fn, world, mesh=None):
        """W=2 in one process; W=4 as a multi-host program, two processes of two devices
        joined by jax.distributed (issue 62 item 4), against the same single-process truth."""
        path = os.path.abspath(os.path.join(EXAMPLES, f"{example}.py"))
        if mesh is not None:
            world = None
        processes = 2 if (world or math.prod(mesh.values())) == 4 else 1
        r = cgj.check(f"{path}:{fn}", world=world, mesh=mesh, inputs=f"{path}:make_inputs", processes=processes)
        world = r.world
        self.assertIsNone(r.error, r.error)
        self.assertEqual(r.isolation, "process" if processes == 1 else "2 processes (jax.distributed)")
        return r, _load(example).make_inputs(world)

    def test_processes_must_divide_the_devices(self):
        path = os.path.abspath(os.path.join(EXAMPLES, "psum.py"))
        with self.assertRaises(cgj.CheckError) as e:
            cgj.check(f"{path}:make_loss", inputs=f"{path}:make_inputs", world=4, processes=3)
        self.assertIn("processes must be a positive integer dividing the 4 devices, got 3", str(e.exception))

    def expect(self, r, want, *, status, keys=(), tensors=None):
        """Every device block equals want[name] there; status and the patterns as given
        (on the checks of `tensors`, default every wrong one)."""
        self.assertEqual(r.status, status, r.table())
        for c in r.checks:
            name = c.tensor.split("[")[0]
            np.testing.assert_allclose(c.observed, _block(want[name], c.tensor), rtol=1e-7, atol=1e-9,
                                       err_msg=f"{c.tensor} on device {c.rank}\n{r.table()}")
        for c in r.checks:
            if tensors is not None and c.tensor.split("[")[0] not in tensors:
                self.assertTrue(c.ok, f"{c.tensor} on device {c.rank}\n{r.table()}")
                continue
            if not c.ok:
                found = {patterns.key(p) for p in c.patterns}
                for k in keys:
                    self.assertIn(k, found, f"{c.tensor} on device {c.rank}\n{r.table()}")

    def test_psum(self):
        for w in WORLDS:
            def loss(x, w_):
                return jnp.sum(jnp.tanh(x) * w_)
            r, inp = self.check("psum", "make_loss", w)
            truth = _grads(loss, inp)
            self.expect(r, truth, status="pass")
            r, _ = self.check("psum", "make_loss_bug", w)
            self.expect(r, {k: v / w for k, v in truth.items()}, status="fail", keys=["over_world"])

    def test_pmean(self):
        for w in WORLDS:
            def loss(x, w_):
                blocks = x.reshape(w, -1)
                return sum(jnp.sum(jnp.sin(blocks.mean(axis=0)) * w_.reshape(w, -1)[d]) for d in range(w))
            r, inp = self.check("pmean", "make_loss", w)
            truth = _grads(loss, inp)
            self.expect(r, truth, status="pass")
            r, _ = self.check("pmean", "make_loss_bug", w)  # x's gradient passes the bad backward, w's not
            self.expect(r, {"x": truth["x"] * w, "w": truth["w"]}, status="fail", keys=["times_world"],
                        tensors=["x"])

    def test_all_gather(self):
        for w in WORLDS:
            def loss(x, w_):
                return sum(jnp.sum(jnp.tanh(x) * w_[d]) for d in range(w))
            r, inp = self.check("all_gather", "make_loss", w)
            truth = _grads(loss, inp)
            self.expect(r, truth, status="pass")
            r, _ = self.check("all_gather", "make_loss_psum_again", w)
            self.expect(r, {"x": truth["x"] * w, "w": truth["w"]}, status="fail", keys=["times_world"],
                        tensors=["x"])
            # own block only: device d's block of x gets d loss_d / d x there, loss_d = sum(tanh(x) w[d])
            x, wt = inp["x"], inp["w"]
            n = x.size // w
            own = np.concatenate([(1 - np.tanh(x[d * n:(d + 1) * n]) ** 2) * wt[d][d * n:(d + 1) * n]
                                  for d in range(w)])
            r, _ = self.check("all_gather", "make_loss_own_block", w)
            self.expect(r, {"x": own, "w": truth["w"]}, status="fail", keys=["own_loss"], tensors=["x"])

    def test_psum_scatter(self):
        for w in WORLDS:
            def loss(x, w_):
                total = jnp.sum(x, axis=0)  # the devices' vectors summed
                return jnp.sum(jnp.sin(total) * w_)  # device d weighs block d with its block of w
            r, inp = self.check("psum_scatter", "make_loss", w)
            truth = _grads(loss, inp)
            self.expect(r, truth, status="pass")
            r, _ = self.check("psum_scatter", "make_loss_bug", w)
            self.expect(r, {"x": truth["x"] / w, "w": truth["w"]}, status="fail", keys=["over_world"],
                        tensors=["x"])

    def test_ppermute(self):
        for w in WORLDS:
            def loss(x, w_):  # device d receives device d-1's block
                return jnp.sum(jnp.sin(jnp.roll(x.reshape(w, -1), 1, axis=0)).ravel() * w_)
            r, inp = self.check("ppermute", "make_loss", w)
            truth = _grads(loss, inp)
            self.expect(r, truth, status="pass")
            # the cotangent stays where it arrived: device d's block gets cos(x_{d-1}) w_d
            x, wt = inp["x"].reshape(w, -1), inp["w"].reshape(w, -1)
            stayed = (np.cos(np.roll(x, 1, axis=0)) * wt).ravel()
            r, _ = self.check("ppermute", "make_loss_bug", w)
            self.expect(r, {"x": stayed, "w": truth["w"]}, status="fail", keys=["unknown"], tensors=["x"])

    def test_all_to_all(self):
        for w in WORLDS:
            def received(x):  # device d's rows: chunk d of every device j, in j's order
                chunks = x.reshape(w, w, -1)           # [sender, destination, 2]
                return jnp.swapaxes(chunks, 0, 1)      # [destination, sender, 2]
            def loss(x, w_):
                return jnp.sum(jnp.tanh(received(x)) * w_.reshape(w, w, -1))
            r, inp = self.check("all_to_all", "make_loss", w)
            truth = _grads(loss, inp)
            self.expect(r, truth, status="pass")
            # not sent back: device d's row j holds the cotangent of what it received from j
            y, wt = np.asarray(received(inp["x"])), inp["w"].reshape(w, w, -1)
            kept = ((1 - np.tanh(y) ** 2) * wt).reshape(w * w, -1)
            r, _ = self.check("all_to_all", "make_loss_bug", w)
            self.expect(r, {"x": kept, "w": truth["w"]}, status="fail", keys=["unknown"], tensors=["x"])

    def test_tp_mlp(self):
        for w in WORLDS:
            def loss(x, w1, w2):
                y = jax.nn.gelu(x @ w1) @ w2
                return jnp.sum(y * y)
            r, inp = self.check("tp_mlp", "make_loss", w)
            truth = _grads(loss, inp)
            self.expect(r, truth, status="pass")
            r, _ = self.check("tp_mlp", "make_loss_megatron_port", w)
            self.expect(r, {"x": truth["x"], "w1": truth["w1"] / w, "w2": truth["w2"] / w}, status="fail",
                        keys=["over_world"], tensors=["w1", "w2"])

    def test_dp_tp_on_a_2d_mesh(self):
        def loss(x, w1, w2):
            y = jax.nn.gelu(x @ w1) @ w2
            return jnp.sum(y * y)
        mesh = {"dp": 2, "tp": 2}
        r, inp = self.check("dp_tp", "make_loss", None, mesh)
        truth = _grads(loss, inp)
        self.expect(r, truth, status="pass")
        self.assertEqual({c.over for c in r.checks if c.tensor.startswith("w")}, {"dp"}, r.table())
        self.assertEqual({c.over for c in r.checks if c.tensor.startswith("x")}, {"tp"}, r.table())
        r, _ = self.check("dp_tp", "make_loss_dp_sync_twice", None, mesh)  # W1 synced over dp twice: x 2
        self.expect(r, {"x": truth["x"], "w1": truth["w1"] * 2, "w2": truth["w2"]}, status="fail",
                    keys=["times_mesh_dim"], tensors=["w1"])
        self.assertIn("x 2: the size of mesh dimension 'dp'", r.table())

    def test_ring_attention(self):
        for w in WORLDS:
            def loss(q, k, v, t):
                s = q @ k.T / math.sqrt(q.shape[1])
                return jnp.sum(jax.nn.softmax(s, axis=1) @ v * t)
            r, inp = self.check("ring_attention", "make_loss", w)
            truth = _grads(loss, inp)
            self.expect(r, truth, status="pass")
            r, _ = self.check("ring_attention", "make_loss_bug", w)
            if w == 2:  # one step forward is one step back: the bug cannot change a gradient
                self.expect(r, truth, status="pass")
                continue
            self.assertEqual(r.status, "fail", r.table())
            wrong = {c.tensor.split("[")[0] for c in r.checks if not c.ok}
            self.assertEqual(wrong, {"k", "v"}, r.table())  # the ring carries k and v; q and t stay home


if __name__ == "__main__":
    unittest.main()
