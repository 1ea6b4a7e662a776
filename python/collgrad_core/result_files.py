"""A rank's two files for the C tool (harness/pytorch/backend_pytorch_read.c
reads them), written by the PyTorch ranks (results.py) and by the JAX
process for each of its devices (collgrad_jax/runner): no torch here.

- results: JSON lines, appended and fsync'd one at a time, so a line is
  either whole or absent when the writer is killed;
- status: one line, "JOB<TAB>UNIX_TIME<TAB>WHAT", replaced atomically.
Numbers are float64; the JSON has no NaN or infinities, so those are the
strings "nan", "inf" and "-inf" (number()).
"""

import json
import math
import os
import time
from typing import Any, Dict, Optional


def number(v: float) -> Any:
    if math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")



def read_or_none(path: str) -> Optional[str]:
    """A file a rank or device process leaves (status, log, stack dump), as
    it stands now; None where it left none (yet). Undecodable bytes are
    replaced: a watcher reads what a dying process wrote, whatever it was."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


class Writer:
    """This rank's results and status files. Write failures raise OSError:
    a rank that cannot report must not pretend it ran."""

    def __init__(self, results: str, status: str):
        self.results = results
        self.status = status

    def line(self, obj: Dict[str, Any]) -> None:
        text = json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n"
        with open(self.results, "a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    def state(self, job: int, what: str) -> None:
        tmp = f"{self.status}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"{job}\t{time.time():.3f}\t{what}\n")
        os.replace(tmp, self.status)
