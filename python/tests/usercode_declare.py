"""Issue 61 item 3: parameters declared by what they are. A replicated bias
beside a sharded weight (Megatron's RowParallelLinear) is declared by its
dotted name, `replicated=["model.bias"]`; undeclared, the refusal names it
and the declaration that fixes it; a name that is neither an input nor a
parameter path is refused with the inputs listed."""

import os
import sys
import unittest

import collgrad_torch as cg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROW = os.path.join(HERE, "usercode_row_parallel.py")


class DottedDeclarations(unittest.TestCase):
    def test_undeclared_bias_is_named_with_its_declaration(self) -> None:
        r = cg.check(f"{ROW}:loss", world=2, inputs=f"{ROW}:make_inputs", semantics="replicated")
        self.assertEqual(r.error_class, 2, r.table())
        self.assertIn("replicated semantics is undefined here", r.error or "")
        self.assertIn("every rank holds an equal copy of model.bias", r.error or "")
        self.assertIn("replicated=['model.bias'] (--replicated model.bias)", r.error or "")
        self.assertNotIn("model.weight,", r.error or "")   # the shards differ: not copies

    def test_declared_by_dotted_name(self) -> None:
        for world in (2, 4):
            r = cg.check(f"{ROW}:loss", world=world, inputs=f"{ROW}:make_inputs", semantics="replicated",
                         replicated=["model.bias"], fd="element")
            self.assertEqual(r.status, "pass", r.table())
            # the truth from the math: L = sum_j (y_j)^2, y = W_full x_full + b, so dL/db = 2 y
            import torch

            import usercode_row_parallel as m

            full = torch.arange(m.OUT * m.K * world, dtype=torch.float64).reshape(m.OUT, -1) / 10 - 0.5
            x = torch.linspace(-1.0, 1.0, m.K * world, dtype=torch.float64)
            y = full @ x + torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64)
            bias = [c for c in r.checks if c.tensor == "model.bias"]
            self.assertEqual(len(bias), world)   # one logical tensor, each rank's copy judged
            for c in bias:
                for got, want in zip(c.observed, (2 * y).tolist()):
                    self.assertAlmostEqual(got, want, delta=1e-9)

    def test_megatron_attributes_declare_it(self) -> None:
        # tensor_model_parallel False: one tensor over the tensor-parallel group (the whole world here)
        for world in (2, 4):
            r = cg.check(f"{ROW}:loss", world=world, inputs=f"{ROW}:make_inputs_megatron", semantics="replicated")
            self.assertEqual(r.status, "pass", r.table())
            self.assertEqual({c.tensor for c in r.checks if c.replicated}, {"model.bias"})

    def test_a_name_that_is_no_input_or_parameter(self) -> None:
        r = cg.check(f"{ROW}:loss", world=2, inputs=f"{ROW}:make_inputs", replicated=["model.baias"])
        self.assertEqual(r.error_class, 2, r.table())
        self.assertIn("replicated names no input or parameter: model.baias", r.error or "")


if __name__ == "__main__":
    unittest.main()
