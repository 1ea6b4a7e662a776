"""all_gather in a shard_map body: each device gathers every block and
weighs the whole vector with its own row of weights; f returns one loss per
device. all_gather's transpose sums the devices' cotangents and hands each
device its block (psum_scatter). Two planted bugs in a custom_vjp
all_gather: a backward that psums once too often (every gradient x W, as
jax #19174's custom_vjp), and one that keeps its own block of its own
cotangent (the cross-device sum missing: only the device's own loss
reaches its block).
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    rng = np.random.RandomState(3)
    return {"x": rng.standard_normal(2 * world), "w": rng.standard_normal((world, 2 * world))}


def _loss(gather):
    def body(x, w):  # x: [2], w: [1, 2W]
        return jnp.sum(jnp.tanh(gather(x)) * w[0])[None]
    return body


def _shard(mesh, gather):
    return jax.shard_map(_loss(gather), mesh=mesh, in_specs=(P("i"), P("i", None)), out_specs=P("i"),
                         check_vma=False)


def make_loss(mesh):
    return _shard(mesh, lambda v: jax.lax.all_gather(v, "i", tiled=True))


def _gather_with(bwd):
    @jax.custom_vjp
    def gather(v):
        return jax.lax.all_gather(v, "i", tiled=True)

    gather.defvjp(lambda v: (gather(v), v.shape[0]), bwd)
    return gather


def _psum_again(n, g):
    return (jax.lax.psum_scatter(jax.lax.psum(g, "i"), "i", tiled=True),)  # the bug: summed twice


def _own_block(n, g):
    return (jax.lax.dynamic_slice_in_dim(g, jax.lax.axis_index("i") * n, n),)  # the bug: no cross-device sum


def make_loss_psum_again(mesh):
    return _shard(mesh, _gather_with(_psum_again))


def make_loss_own_block(mesh):
    return _shard(mesh, _gather_with(_own_block))
