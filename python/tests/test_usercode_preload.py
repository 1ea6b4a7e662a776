"""spawn.py imports the installed packages the user's files import before it
forks the ranks (checker/preload.py): which packages, that a rank finds them
imported, and that a package reading the rank's identity at import is left
to each rank."""

import os
import sys
import tempfile
import textwrap
import unittest

import collgrad_torch as cg
from collgrad_torch.checker import preload

HERE = os.path.dirname(os.path.abspath(__file__))
USES_YAML = os.path.join(HERE, "usercode_preload.py")


class WhichPackages(unittest.TestCase):
    def test_installed_packages_imported_anywhere_in_the_file(self) -> None:
        # yaml (PyYAML, installed beside torch) imported inside a function, as the frameworks' examples
        # import theirs; a module beside the file and torch itself are never preloaded
        self.assertEqual(preload.third_party([f"{USES_YAML}:make_inputs"], "gloo"), ["yaml:safe_load"])

    def test_nothing_for_gpu_ranks_or_unreadable_files(self) -> None:
        self.assertEqual(preload.third_party([f"{USES_YAML}:make_inputs"], "nccl"), [])
        self.assertEqual(preload.third_party([f"{HERE}/no_such_file.py:f", ""], "gloo"), [])

    def test_a_package_beside_the_users_file_is_not_installed(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "mine_beside.py"), "w") as f:
                f.write("X = 1\n")
            with open(os.path.join(tmp, "user.py"), "w") as f:
                f.write("import mine_beside\nimport yaml\n")
            sys.path.insert(0, tmp)
            try:
                self.assertEqual(preload.third_party([f"{tmp}/user.py:f"], "gloo"), ["yaml"])
            finally:
                sys.path.remove(tmp)


class ReadsTheRank(unittest.TestCase):
    def test_an_import_that_reads_the_rank_is_noticed(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "reads_rank_at_import.py"), "w") as f:
                f.write(textwrap.dedent("""\
                    import os
                    MINE = os.environ.get("RANK", "0")
                """))
            with open(os.path.join(tmp, "reads_nothing.py"), "w") as f:
                f.write("import os\nTHREADS = os.environ.get('OMP_NUM_THREADS')\n")
            sys.path.insert(0, tmp)
            try:
                self.assertTrue(preload.preload(["reads_nothing", "no_such_package_here"]))
                self.assertFalse(preload.preload(["reads_rank_at_import"]))
                self.assertIs(type(os.environ), os._Environ, "os.environ is itself again")
            finally:
                sys.path.remove(tmp)
                for m in ("reads_rank_at_import", "reads_nothing"):
                    sys.modules.pop(m, None)
                preload._Watched.read_rank = False


class RanksFindThemImported(unittest.TestCase):
    def test_the_rank_finds_yaml_imported_before_its_own_code(self) -> None:
        # usercode_preload's make_inputs writes whether yaml was in sys.modules before its import ran
        with tempfile.TemporaryDirectory() as mark:
            os.environ["COLLGRAD_TEST_MARK"] = mark
            try:
                r = cg.check(f"{USES_YAML}:loss", inputs=f"{USES_YAML}:make_inputs", world=2)
            finally:
                del os.environ["COLLGRAD_TEST_MARK"]
            self.assertEqual(r.status, "pass", r.error or r.table())
            for rank in range(2):
                with open(os.path.join(mark, f"rank{rank}")) as f:
                    self.assertEqual(f.read(), "yaml was imported", rank)

    def test_a_package_that_reads_the_rank_at_import_is_each_ranks_own(self) -> None:
        # spawn.py notices the read and starts over without the packages: each rank's module holds its rank
        with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as mark:
            with open(os.path.join(tmp, "reads_rank_at_import.py"), "w") as f:
                f.write("import os\nMINE = os.environ.get('RANK', 'the spawner')\n")
            with open(os.path.join(tmp, "user_of_it.py"), "w") as f:
                f.write(textwrap.dedent("""\
                    import os
                    import torch

                    def make_inputs(rank, world):
                        import reads_rank_at_import
                        with open(os.path.join(os.environ["COLLGRAD_TEST_MARK"], f"rank{rank}"), "w") as f:
                            f.write(reads_rank_at_import.MINE)
                        return {"x": torch.ones(2, dtype=torch.float64, requires_grad=True)}

                    def loss(rank, world, x):
                        return x.sum()
                """))
            sys.path.insert(0, tmp)
            os.environ["COLLGRAD_TEST_MARK"] = mark
            chosen = preload.third_party
            preload.third_party = lambda refs, backend: ["reads_rank_at_import"]   # as if it were installed
            try:
                r = cg.check(f"{tmp}/user_of_it.py:loss", inputs=f"{tmp}/user_of_it.py:make_inputs", world=2)
            finally:
                preload.third_party = chosen
                del os.environ["COLLGRAD_TEST_MARK"]
                sys.path.remove(tmp)
            self.assertEqual(r.status, "pass", r.error or r.table())
            for rank in range(2):
                with open(os.path.join(mark, f"rank{rank}")) as f:
                    self.assertEqual(f.read(), str(rank))


if __name__ == "__main__":
    unittest.main()
