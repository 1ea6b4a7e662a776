"""examples/user_code's torch 2.x programs (DTensor over a DeviceMesh) through
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
from collgrad_torch.usercode import patterns  # noqa: E402

TORCH2 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 4)

# DTensor's behaviour, by measurement (torch MAJOR.MINOR -> function, arguments, status, pattern):
# each listed torch version is asserted; another 2.x only prints what it did (a new finding to list)
DTENSOR_MEASURED: Dict[str, List[Any]] = {
    "2.15": [("redistribute_replicate", {}, "fail", patterns.OWN_LOSS),
             ("full_tensor", {}, "fail", patterns.OWN_LOSS),
             ("redistribute_same_loss", {}, "fail", patterns.REPLICATED),
             ("redistribute_same_loss", {"semantics": "replicated"}, "pass", None)],
}



class DTensorExamples(unittest.TestCase):
    def test_dtensor(self) -> None:
        if not TORCH2:
            self.skipTest(f"DTensor needs torch >= 2.4; this is torch {torch.__version__}")
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
