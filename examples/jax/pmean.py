"""pmean in a shard_map body: every device averages the devices' blocks and
weighs the mean with its own weights; f returns one loss per device. The
planted bug: a pmean wrapped in a custom_vjp whose backward psums the
cotangents and forgets the 1/W of the mean: every gradient x W.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    rng = np.random.RandomState(2)
    return {"x": rng.standard_normal(3 * world), "w": rng.standard_normal(3 * world)}


def _loss(pmean):
    def body(x, w):
        return jnp.sum(jnp.sin(pmean(x)) * w)[None]  # this device's loss
    return body


def make_loss(mesh):
    return jax.shard_map(_loss(lambda v: jax.lax.pmean(v, "i")), mesh=mesh, in_specs=(P("i"), P("i")),
                         out_specs=P("i"))


@jax.custom_vjp
def pmean_no_scale(v):
    return jax.lax.pmean(v, "i")


def _fwd(v):
    return pmean_no_scale(v), None


def _bwd(_, g):
    return (jax.lax.psum(g, "i"),)  # the bug: the mean's transpose is psum(g) / W


pmean_no_scale.defvjp(_fwd, _bwd)


def make_loss_bug(mesh):
    return jax.shard_map(_loss(pmean_no_scale), mesh=mesh, in_specs=(P("i"), P("i")), out_specs=P("i"),
                         check_vma=False)
