"""collgrad_jax: check the gradients of your own shard_map code, device by device.

    import collgrad_jax as cgj
    result = cgj.check(make_loss, world=4, inputs=make_inputs)
    print(result.table())

``make_inputs(world)`` returns a dict of global arrays; ``make_loss(mesh)``
returns ``f(**inputs)``, the global scalar loss (or one loss per device, a
[W] array, whose sum is the global loss), built with ``jax.shard_map`` over
the check's 1-D mesh of W CPU devices with axis name ``'i'``. The check runs
in a fresh process whose W devices are XLA's host devices
(``--xla_force_host_platform_device_count``) with float64 on, and compares
``jax.grad`` of the global loss, device block by device block, with central
finite differences of the same loss. The result, its table, patterns and
reports are collgrad_core's, the PyTorch check's too, so one CI reads both.

Needs jax, not torch (collgrad_core, what the two checks share, imports no
framework; this package imports nothing of collgrad_torch);
``pip install "./python[jax]"``.
"""

from .api import CheckError, GradientMismatch, assert_gradients, check

check_jax = check  # the name the issue and the docs of the C tool use

__all__ = ["check", "check_jax", "assert_gradients", "CheckError", "GradientMismatch"]
