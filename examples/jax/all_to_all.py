"""all_to_all in a shard_map body (expert-parallel dispatch): each device
splits its block into W chunks and sends chunk j to device j, receiving one
chunk from every device; f returns one loss per device. all_to_all's
transpose is the all_to_all back. The planted bug: a custom_vjp all_to_all
whose backward hands the received chunks' cotangents on without sending
them back: each device's gradient lands on the wrong chunks.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    rng = np.random.RandomState(6)
    return {"x": rng.standard_normal((world * world, 2)), "w": rng.standard_normal((world * world, 2))}


def _a2a(v):
    return jax.lax.all_to_all(v, "i", 0, 0, tiled=True)


def _loss(a2a):
    def body(x, w):  # x, w: [W, 2], one row per destination device
        return jnp.sum(jnp.tanh(a2a(x)) * w)[None]
    return body


def make_loss(mesh):
    return jax.shard_map(_loss(_a2a), mesh=mesh, in_specs=(P("i", None), P("i", None)), out_specs=P("i"))


@jax.custom_vjp
def a2a_no_return(v):
    return _a2a(v)


a2a_no_return.defvjp(lambda v: (a2a_no_return(v), None), lambda _, g: (g,))  # the bug: g is not sent back


def make_loss_bug(mesh):
    return jax.shard_map(_loss(a2a_no_return), mesh=mesh, in_specs=(P("i", None), P("i", None)), out_specs=P("i"),
                         check_vma=False)
