"""Issue 61's findings about a model as it ships (its dtypes, its complex
buffers, code written for GPUs), each a test that fails without its fix;
run under torch 1.13
(python_usercode_dtypes) and torch 2.x (python_usercode_dtypes_torch2)."""

import os
import sys
import unittest

import collgrad_torch as cg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
COMPLEX = os.path.join(HERE, "usercode_complex.py")
FLOAT32 = os.path.join(HERE, "usercode_float32.py")
GPU = os.path.join(HERE, "usercode_gpu_code.py")


class GpuCodeOnCpu(unittest.TestCase):
    """Item 5: code written for GPUs (torch.cuda.current_device(), .cuda(),
    .to("cuda"), set_device) checked on CPU ranks with cpu_for_cuda=True;
    without it, the error a CPU machine gives is the code's (exit 2)."""

    def test_runs_on_cpu_ranks(self) -> None:
        import torch

        if torch.cuda.is_available():
            self.skipTest("a GPU is here: the same code runs on it with backend='nccl'")
        r = cg.check(f"{GPU}:scaled_loss", world=2, inputs=f"{GPU}:make_inputs", fd="element", cpu_for_cuda=True)
        self.assertEqual(r.status, "pass", r.table())
        # dL/dw_r = sum_k (k+1) 2 y x_r, y = sum_r w_r x_r: from the math, per element
        xs = [[v * (k + 1) for v in (1.0, -2.0, 0.5)] for k in range(2)]
        ws = [[0.5 + k, 1.0 + k, 1.5 + k] for k in range(2)]
        y = [sum(ws[k][i] * xs[k][i] for k in range(2)) for i in range(3)]
        for c in r.checks:
            want = [3 * 2 * y[i] * xs[c.rank][i] for i in range(3)]
            for got, w in zip(c.observed, want):
                self.assertAlmostEqual(got, w, delta=1e-9)
        plain = cg.check(f"{GPU}:scaled_loss", world=2, inputs=f"{GPU}:make_inputs", fd="element")
        self.assertEqual(plain.error_class, 2, plain.table())

    def test_a_cuda_device_mesh_is_a_cpu_one(self) -> None:
        # init_device_mesh("cuda", ...) as torchtitan asks for it: a CPU mesh, the same numbers
        import torch

        if torch.cuda.is_available() or not hasattr(torch.distributed, "device_mesh"):
            self.skipTest("a GPU is here, or torch 1.13 (no DeviceMesh)")
        r = cg.check(f"{GPU}:scaled_loss_mesh", world=2, inputs=f"{GPU}:make_inputs_mesh", fd="element",
                     cpu_for_cuda=True)
        self.assertEqual(r.status, "pass", r.error or r.table())
        xs = [[v * (k + 1) for v in (1.0, -2.0, 0.5)] for k in range(2)]
        ws = [[0.5 + k, 1.0 + k, 1.5 + k] for k in range(2)]
        y = [sum(ws[k][i] * xs[k][i] for k in range(2)) for i in range(3)]
        for c in r.checks:
            for got, i in zip(c.observed, range(3)):
                self.assertAlmostEqual(got, 3 * 2 * y[i] * xs[c.rank][i], delta=1e-9)
        plain = cg.check(f"{GPU}:scaled_loss_mesh", world=2, inputs=f"{GPU}:make_inputs_mesh", fd="element")
        self.assertEqual(plain.error_class, 2, plain.table())



class Float32InsideTheModel(unittest.TestCase):
    """Item 1: a model that casts to float32 inside (transformers' Llama:
    RMSNorm .to(float32), softmax(dtype=float32), logits.float()) is checked
    as written: its truth's forwards run those requests in float64, so the
    truth is within 1e-8 of a float64 reference; the observed gradient is its
    own float32-touched one, within the default tolerance."""

    def test_truth_within_1e_8_of_the_float64_reference(self) -> None:
        import usercode_float32 as m

        for world in (2, 4):
            want = m.reference(world)
            r = cg.check(f"{FLOAT32}:block_loss", world=world, inputs=f"{FLOAT32}:make_inputs", fd="element")
            self.assertEqual(r.status, "pass", r.table())
            seen = 0
            for c in r.checks:
                ref = want[c.rank][c.tensor.split(".", 1)[1]]
                for truth, got, exact in zip(c.truth, c.observed, ref):
                    self.assertLess(abs(truth - exact), 1e-8, (c.rank, c.tensor, c.truth, ref))
                    self.assertLess(abs(got - exact), 1e-5 * (1 + abs(exact)), (c.rank, c.tensor, c.observed, ref))
                    seen += 1
            self.assertEqual(seen, world * (4 + 16 + 4))
            self.assertTrue(any("computes in a lower precision where it asks" in n and "float32" in n
                                for n in r.notes), r.notes)

    def test_bfloat16_casts(self) -> None:
        """The truth's forwards run every bfloat16 request in float64 (within
        1e-8 of the float64 reference); the observed bfloat16 gradient is
        judged with bfloat16's tolerances, said in the notes, unless the user
        gives some."""
        import usercode_float32 as m

        want = m.linear_reference(2)
        for fn in ("bfloat16_loss",):
            r = cg.check(f"{FLOAT32}:{fn}", world=2, inputs=f"{FLOAT32}:make_inputs_linear", fd="element")
            self.assertEqual(r.status, "pass", r.table())
            self.assertEqual((r.atol, r.rtol), (1e-2, 5e-2))
            self.assertTrue(any("computed in bfloat16" in n for n in r.notes), r.notes)
            worst = 0.0
            for c in r.checks:
                ref = want[c.rank][c.tensor.split(".", 1)[1]]
                for truth, got, exact in zip(c.truth, c.observed, ref):
                    self.assertLess(abs(truth - exact), 1e-8, (fn, c.rank, c.tensor, c.truth, ref))
                    worst = max(worst, abs(got - exact) / (1 + abs(exact)))
            self.assertGreater(worst, 1e-4, fn)   # bfloat16 arithmetic, really: beyond float32's rounding
        strict = cg.check(f"{FLOAT32}:bfloat16_loss", world=2, inputs=f"{FLOAT32}:make_inputs_linear",
                          fd="element", rtol=1e-6, atol=1e-9)
        self.assertEqual(strict.status, "fail", strict.table())   # the user's tolerances stand

class ComplexBuffersStayComplex(unittest.TestCase):
    """Item 2: Module.to(float64) keeps only a complex buffer's real part
    (torchtitan's RoPE cache): the check must check the model the user
    built, its complex buffer complex128, and say so."""

    def test_the_model_as_built(self) -> None:
        import usercode_complex as m

        for world in (2, 4):
            want = m.reference(world)
            other = m.reference(world, keep_imaginary=False)
            # the test can fail: the real-part model's gradients are far from the built model's
            self.assertGreater(max(abs(a - b) for r in range(world) for a, b in zip(want[r], other[r])), 0.1)
            r = cg.check(f"{COMPLEX}:rotate_all_reduce", world=world, inputs=f"{COMPLEX}:make_inputs",
                         fd="element")
            self.assertEqual(r.status, "pass", r.table())
            checks = {c.rank: c for c in r.checks if c.tensor == "model.w"}
            self.assertEqual(sorted(checks), list(range(world)))
            for rank, c in checks.items():
                for got, truth, ref in zip(c.observed, c.truth, want[rank]):
                    self.assertAlmostEqual(got, ref, delta=1e-9 * (1 + abs(ref)))
                    self.assertAlmostEqual(truth, ref, delta=1e-6 * (1 + abs(ref)))
            self.assertTrue(any("model.freqs: a complex64 buffer, run as complex128" in n for n in r.notes),
                            r.notes)

    def test_a_complex_parameter_that_requires_grad_is_refused_by_name(self) -> None:
        r = cg.check(f"{COMPLEX}:rotate_all_reduce", world=2, inputs=f"{COMPLEX}:make_inputs_complex_param")
        self.assertEqual(r.error_class, 2, r.table())
        self.assertIn("model.c is a complex64 parameter that requires grad", r.error or "")


if __name__ == "__main__":
    unittest.main()
