"""What a rank tells the C tool (harness/pytorch/backend_pytorch_read.c reads it).

Two files per rank, both in the run's private directory:
- results: JSON lines, appended and fsync'd one at a time, so a line is
  either whole or absent when the rank is killed: first a "hello" line
  (versions, what the API can do), then one line per job in job order, or a
  "fatal" line when the rank cannot run at all (its "class" ExitClass.USAGE
  where that is the user's input, a COLLGRAD_KINDS file that does not load:
  the tool then exits with that class, not INFRA);
- status: one line, "JOB<TAB>UNIX_TIME<TAB>WHAT", replaced atomically before
  every statement, so a watchdog that kills a hung rank can say where it was
  ("job 3: backward at cases/x.case:7:1").
Numbers are float64; the JSON has no NaN or infinities, so those are the
strings "nan", "inf" and "-inf".
"""

from typing import Any, Dict, Iterable, List, Optional

import torch

from collgrad_core.result_files import Writer, number  # noqa: F401 (the rank's writer; number for values())


def values(t: Optional[torch.Tensor]) -> Optional[List[Any]]:
    if t is None:
        return None
    return [number(v) for v in t.detach().to(torch.float64).reshape(-1).tolist()]


def tensors(bindings: Iterable) -> List[Dict[str, Any]]:
    """Each (name, value, gradient) binding's shape, values and gradient
    (None: no gradient reached it)."""
    out = []
    for name, t, grad in bindings:
        out.append({"name": name, "shape": list(t.shape), "value": values(t), "grad": values(grad)})
    return out


