"""One right loss, written the ways JAX users write it (issue 60 item 6):
plain, under jax.jit (with and without donate_argnums), under
functools.partial; make_inputs names the inputs in another order than f."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    rng = np.random.RandomState(3)
    return {"w": rng.standard_normal(4), "x": rng.standard_normal(2 * world)}   # w first, f takes (x, w)


def _sharded(mesh):
    def body(x, w):
        y = jax.lax.all_gather(jnp.tanh(x), "i", tiled=True)
        return jax.lax.psum(jnp.sum(y[:4] * w) ** 2, "i") / jax.lax.psum(1, "i")
    return jax.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P())


def make_loss_plain(mesh):
    f = _sharded(mesh)

    def loss(x, w):
        return f(x, w)
    return loss


def make_loss_jit(mesh):
    return jax.jit(_sharded(mesh))


def make_loss_jit_donate(mesh):
    return jax.jit(_sharded(mesh), donate_argnums=(0,))


def make_loss_partial(mesh):
    f = _sharded(mesh)

    def scaled(x, w, *, scale):
        return f(x, w) * scale
    return functools.partial(scaled, scale=2.0)


def make_loss_jit_partial(mesh):
    f = _sharded(mesh)

    def scaled(x, w, scale):
        return f(x, w) * scale
    return jax.jit(functools.partial(scaled, scale=2.0))
