"""psum_scatter in a shard_map body: each device holds a whole vector of
its own, the devices sum them and each keeps its block; f returns one loss
per device. psum_scatter's transpose gathers the blocks' cotangents to every
device. The planted bug: a custom_vjp psum_scatter whose backward averages
the gathered cotangents (the transpose of a mean, where the forward sums):
every gradient x 1/W.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    rng = np.random.RandomState(4)
    return {"x": rng.standard_normal((world, 2 * world)), "w": rng.standard_normal(2 * world)}


def _loss(scatter):
    def body(x, w):  # x: [1, 2W] (this device's vector), w: [2]
        return jnp.sum(jnp.sin(scatter(x[0])) * w)[None]
    return body


def make_loss(mesh):
    return jax.shard_map(_loss(lambda v: jax.lax.psum_scatter(v, "i", tiled=True)), mesh=mesh,
                         in_specs=(P("i", None), P("i")), out_specs=P("i"))


@jax.custom_vjp
def scatter_mean_bwd(v):
    return jax.lax.psum_scatter(v, "i", tiled=True)


def _fwd(v):
    return scatter_mean_bwd(v), None


def _bwd(_, g):
    return (jax.lax.all_gather(g, "i", tiled=True) / jax.lax.psum(1, "i"),)  # the bug: / W


scatter_mean_bwd.defvjp(_fwd, _bwd)


def make_loss_bug(mesh):
    return jax.shard_map(_loss(scatter_mean_bwd), mesh=mesh, in_specs=(P("i", None), P("i")), out_specs=P("i"),
                         check_vma=False)
