"""The pytest plugin's name before 0.3 (it is collgrad_core.pytest_plugin now):
`-p collgrad_torch.checker.pytest_plugin` still loads it, beside the installed
entry point or without it, and warns once. This module has no hooks of its
own; pytest loads the plugin it names, once, whichever name came first.
The next release drops this name."""

import warnings

warnings.warn("collgrad_torch.checker.pytest_plugin is collgrad_core.pytest_plugin now (-p "
              "collgrad_core.pytest_plugin); the old name goes in the next release", DeprecationWarning, stacklevel=2)

pytest_plugins = ["collgrad_core.pytest_plugin"]
