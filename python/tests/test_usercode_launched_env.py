"""Where a launched process stands, read from each launcher's own variables
(checker/launched_env.py): the variables as torchrun, srun and the two
mpiexecs document them."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from collgrad_torch.checker.launched_env import LaunchError, from_launcher  # noqa: E402


class FromLauncher(unittest.TestCase):
    def test_each_launcher(self) -> None:
        cases = [
            ({"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "GROUP_RANK": "2"}, (5, 8, 1, "torchrun")),
            ({"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "0"}, (3, 4, 0, "srun")),
            ({"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1"}, (1, 2, 1, "mpiexec (MPICH)")),
            ({"OMPI_COMM_WORLD_RANK": "6", "OMPI_COMM_WORLD_SIZE": "7"}, (6, 7, 6, "mpiexec (Open MPI)")),
        ]
        for env, (rank, world, local, launcher) in cases:
            with self.subTest(launcher=launcher):
                p = from_launcher(env)
                self.assertEqual((p.rank, p.world, p.local_rank, p.launcher), (rank, world, local, launcher))
        self.assertTrue(from_launcher(cases[0][0]).host.endswith("(node 2)"))

    def test_torchrun_under_srun_is_torchrun(self) -> None:
        # one agent per node under srun: SLURM's variables count agents, torchrun's count ranks
        p = from_launcher({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1",
                           "SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_NODEID": "1"})
        self.assertEqual((p.rank, p.world, p.launcher), (3, 4, "torchrun"))

    def test_refusals(self) -> None:
        for env, words in (({}, "no launcher's variables are set here"),
                           ({"RANK": "2", "WORLD_SIZE": "2"}, "rank 2 of a world of 2"),
                           ({"PMI_RANK": "x", "PMI_SIZE": "2"}, "PMI_RANK='x' is not an integer"),
                           ({"SLURM_PROCID": "-1", "SLURM_NTASKS": "2"}, "negative")):
            with self.subTest(env=env):
                with self.assertRaises(LaunchError) as e:
                    from_launcher(env)
                self.assertIn(words, str(e.exception))


if __name__ == "__main__":
    unittest.main()
