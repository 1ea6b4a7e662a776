"""The device process's main: python -m collgrad_jax.device_run SPEC OUT.

Started by devices.run with W host devices in its environment; writes OUT,
a Measured or {"error", "class"}: class 2 where the user's code or inputs
are at fault (make_inputs or make_loss raised, a loss of the wrong shape,
a function JAX cannot differentiate), class 3 where the machine is (jax
missing, fewer devices than asked)."""

import faulthandler
import json
import os
import signal
import sys
import traceback
from typing import Any, Dict


def _write(path: str, out: Dict[str, Any]) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(out, f, allow_nan=True)
    os.replace(tmp, path)


def main(argv: "list[str]") -> int:
    if len(argv) not in (3, 4):
        print("usage: python -m collgrad_jax.device_run SPEC OUT [PROCESS] (started by collgrad_jax.check)",
              file=sys.stderr)
        return 2
    spec_path, out_path = argv[1], argv[2]
    process = int(argv[3]) if len(argv) == 4 else 0
    here = os.path.dirname(out_path)
    faulthandler.enable()   # a crash in native code prints the stacks into the output the parent keeps
    stacks = open(os.path.join(here, "stack"), "w", encoding="utf-8")   # noqa: SIM115 (open while the process runs)
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)   # the parent's question to a hang
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    try:
        import jax  # noqa: F401
    except ImportError as e:
        _write(out_path, {"error": f"jax is not installed for {sys.executable} ({e}): pip install \"./python[jax]\" "
                                   "or scripts/jax-venv.sh", "class": 3})
        return 0
    from collgrad_core import refs

    from . import measure

    measure.STATUS_PATH = os.path.join(here, "status")
    if spec.get("processes", 1) > 1:   # one host of a multi-host program: join the others first
        measure.phase("joining the other processes (jax.distributed)")
        try:
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
            jax.distributed.initialize(coordinator_address=spec["coordinator"], num_processes=spec["processes"],
                                       process_id=process)
        except Exception as e:
            _write(out_path, {"error": f"process {process} could not join the others through jax.distributed at "
                                       f"{spec['coordinator']}: {type(e).__name__}: {e}", "class": 3})
            return 0
    measure.phase("importing the user's code")
    try:
        out: Dict[str, Any] = dict(measure.measure(spec))
    except refs.RefError as e:
        out = {"error": str(e), "class": 2}
    except measure.UserError as e:
        out = {"error": str(e), "class": 2}
    except measure.MachineError as e:
        out = {"error": str(e), "class": 3}
    except Exception as e:  # the user's code raised somewhere the measurement did not expect
        out = {"error": f"the check's device process failed: {type(e).__name__}: {e}\n{traceback.format_exc()}",
               "class": 2}
    _write(out_path, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
