"""python -m collgrad_jax check FILE.py:make_loss --inputs FILE.py:make_inputs --world 2,4"""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
