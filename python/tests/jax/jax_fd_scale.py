"""JAX functions at the scale where finite differences lose digits (issue 60
item 2, the JAX check): 1M elements, a loss of about 1e7."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

N = 1_000_000   # per device


def make_inputs(world):
    return {"x": np.concatenate([np.linspace(-1, 1, N) + 0.1 * d for d in range(world)])}


def _body(stretch):
    def body(x):
        if stretch:
            x = _stretched(x)
        d = jax.lax.axis_index("i")
        s = jax.lax.psum(jnp.tanh(x) * (d + 1), "i")
        return jax.lax.psum(jnp.sum(s ** 2), "i") / jax.lax.psum(1, "i")   # the one loss, on every device
    return body


@jax.custom_vjp
def _stretched(x):
    return x


_stretched.defvjp(lambda x: (x, None), lambda _, g: (g * (1 + 1e-3),))   # wrong by 1e-3 relative


def make_loss(mesh):
    return jax.shard_map(_body(False), mesh=mesh, in_specs=(P("i"),), out_specs=P())


def make_loss_off(mesh):
    return jax.shard_map(_body(True), mesh=mesh, in_specs=(P("i"),), out_specs=P())
