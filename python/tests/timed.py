"""A unittest result that times each test and prints the longest at the end:
where CI's time goes, test by test (run.py, jax/run.py)."""

import time
import unittest
from typing import Dict


class TimedResult(unittest.TextTestResult):
    took: Dict[str, float] = {}

    def startTest(self, test: unittest.TestCase) -> None:
        self.took[test.id()] = -time.monotonic()
        super().startTest(test)

    def stopTest(self, test: unittest.TestCase) -> None:
        self.took[test.id()] += time.monotonic()
        super().stopTest(test)

    @classmethod
    def print_longest(cls, n: int = 12) -> None:
        slow = [(name, s) for name, s in sorted(cls.took.items(), key=lambda kv: -kv[1])[:n] if s >= 1.0]
        if slow:
            print("seconds per test, the longest first:\n" + "".join(f"  {s:7.1f}  {name}\n" for name, s in slow),
                  end="")
