"""`python -m collgrad_torch check ...` (and the `collgrad-torch` script): the
user-code check from a shell (checker/cli.py). The case-IR runner keeps its
own entry point, `python -m collgrad_torch.runner.rank`."""

import sys
from typing import List, Optional

from collgrad_core.exit_class import ExitClass

USAGE = "usage: python -m collgrad_torch check [FN] [--step FN] --inputs MAKE_INPUTS [options]  (check --help)"


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return ExitClass.PASS if argv else ExitClass.USAGE
    if argv[0] != "check":
        print(f"python -m collgrad_torch: unknown command '{argv[0]}'\n{USAGE}", file=sys.stderr)
        return ExitClass.USAGE
    from .checker import cli

    return cli.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
