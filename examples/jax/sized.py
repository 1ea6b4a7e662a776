"""A JAX check of a set size, for scripts/jax-time.sh: 64 input elements in
all at any world (x sharded over 'i', w replicated), a tanh layer gathered
and psum'd. Right as written."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

ELEMENTS = 64


def make_inputs(world):
    rng = np.random.RandomState(9)
    return {"x": rng.standard_normal(ELEMENTS // 2), "w": rng.standard_normal(ELEMENTS // 2)}


def make_loss(mesh):
    def body(x, w):
        y = jax.lax.all_gather(jnp.tanh(x), "i", tiled=True)
        return jax.lax.psum(jnp.sum(y * w) ** 2, "i")
    return jax.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P())
