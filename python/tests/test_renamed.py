"""The module names of collgrad_torch 0.1 still import in this release, each
as the very module it became, with a DeprecationWarning that names the new
one (collgrad_torch/_renamed.py); names that were never the package's are
not answered."""

import importlib
import sys
import unittest
import warnings

import collgrad_torch
from collgrad_torch import _renamed


class RenamedTest(unittest.TestCase):
    def test_the_mapping(self):
        self.assertEqual(_renamed.new_name("collgrad_torch.usercode"), "collgrad_torch.checker")
        self.assertEqual(_renamed.new_name("collgrad_torch.usercode.judge"), "collgrad_torch.checker.judge")
        self.assertEqual(_renamed.new_name("collgrad_torch.pytest_plugin"), "collgrad_torch.checker.pytest_plugin")
        self.assertEqual(_renamed.new_name("collgrad_torch.rank"), "collgrad_torch.runner.rank")
        self.assertEqual(_renamed.new_name("collgrad_torch.api_nn"), "collgrad_torch.runner.api_nn")
        self.assertEqual(_renamed.new_name("collgrad_torch.checker.patterns"), "collgrad_core.patterns")
        self.assertEqual(_renamed.new_name("collgrad_torch.usercode.result"), "collgrad_core.result")
        self.assertEqual(_renamed.new_name("collgrad_torch.exit_class"), "collgrad_core.exit_class")
        for never in ("collgrad_torch.checker", "collgrad_torch.runner.rank", "collgrad_torch.nothing", "json"):
            self.assertIsNone(_renamed.new_name(never), never)

    def old(self, name):
        sys.modules.pop(name, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(name)
        return module, [str(w.message) for w in caught if w.category is DeprecationWarning]

    def test_an_old_name_is_the_new_module_and_warns(self):
        for old, new in (("collgrad_torch.usercode.judge", "collgrad_torch.checker.judge"),
                         ("collgrad_torch.usercode.patterns", "collgrad_core.patterns"),
                         ("collgrad_torch.checker.report", "collgrad_core.report"),
                         ("collgrad_torch.rng", "collgrad_core.rng"),
                         ("collgrad_torch.ir", "collgrad_core.ir")):
            module, said = self.old(old)
            self.assertIs(module, importlib.import_module(new))
            self.assertEqual(module.__name__, new)
            self.assertEqual(module.__spec__.name, new)  # the alias leaves the module its own spec
            self.assertIn(f"{old} is {new} now; the old name goes in the next release", said)

    def test_the_public_names_stay_where_they_were(self):
        from collgrad_torch.checker import check, Result
        self.assertIs(collgrad_torch.check, check)
        self.assertIs(collgrad_torch.Result, Result)


if __name__ == "__main__":
    unittest.main()
