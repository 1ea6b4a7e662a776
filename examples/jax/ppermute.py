"""ppermute in a shard_map body: each device passes its block to the next
device of the ring and weighs what it receives; f returns one loss per
device. ppermute's transpose sends each cotangent back along the inverse
permutation. The planted bug: a custom_vjp ppermute whose backward keeps
the cotangent where it arrived (no permutation back): device d gets the
cotangent of the block device d - 1 sent, so no scaling names it.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    rng = np.random.RandomState(5)
    return {"x": rng.standard_normal(3 * world), "w": rng.standard_normal(3 * world)}


def _ring(world):
    return [(d, (d + 1) % world) for d in range(world)]


def _loss(shift):
    def body(x, w):
        return jnp.sum(jnp.sin(shift(x)) * w)[None]
    return body


def make_loss(mesh):
    perm = _ring(mesh.size)
    return jax.shard_map(_loss(lambda v: jax.lax.ppermute(v, "i", perm)), mesh=mesh, in_specs=(P("i"), P("i")),
                         out_specs=P("i"))


def make_loss_bug(mesh):
    perm = _ring(mesh.size)

    @jax.custom_vjp
    def shift(v):
        return jax.lax.ppermute(v, "i", perm)

    shift.defvjp(lambda v: (shift(v), None), lambda _, g: (g,))  # the bug: g stays; it belongs to the sender
    return jax.shard_map(_loss(shift), mesh=mesh, in_specs=(P("i"), P("i")), out_specs=P("i"), check_vma=False)
