"""A Megatron-style tensor-parallel MLP in shard_map: x replicated, W1 split
by columns and W2 by rows over 'i', the partial outputs psum'd; one global
loss. With check_vma on (JAX's default) JAX inserts the collectives'
transposes itself. The planted bug is the port of Megatron-LM's f and g
operators from PyTorch (f: identity forward, all-reduce backward, before
the column-parallel matmul; g: all-reduce forward, identity backward,
after the row-parallel one) as custom_vjps, with check_vma=False as such
ports run. shard_map's own transpose there divides a replicated output's
cotangent by W and sums a replicated input's over the devices, which
PyTorch's autograd never does: g's identity backward hands W1 and W2 1/W of
their gradients, and x comes out right only because f's all-reduce and
shard_map's sum make up for the 1/W together.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

BATCH, DIM, HIDDEN_PER_DEVICE = 2, 3, 2


def make_inputs(world):
    rng = np.random.RandomState(7)
    hidden = HIDDEN_PER_DEVICE * world
    return {"x": rng.standard_normal((BATCH, DIM)), "w1": rng.standard_normal((DIM, hidden)) / 2,
            "w2": rng.standard_normal((hidden, DIM)) / 2}


def _mlp(f, g):
    def body(x, w1, w2):  # x whole, w1: [DIM, H/W] (columns), w2: [H/W, DIM] (rows)
        y = g(jax.nn.gelu(f(x) @ w1) @ w2)
        return jnp.sum(y * y)
    return body


def make_loss(mesh):
    return jax.shard_map(_mlp(lambda x: x, lambda y: jax.lax.psum(y, "i")), mesh=mesh,
                         in_specs=(P(), P(None, "i"), P("i", None)), out_specs=P())


@jax.custom_vjp
def copy_to_tp(x):       # Megatron's f
    return x


copy_to_tp.defvjp(lambda x: (x, None), lambda _, g: (jax.lax.psum(g, "i"),))


@jax.custom_vjp
def reduce_from_tp(y):   # Megatron's g
    return jax.lax.psum(y, "i")


reduce_from_tp.defvjp(lambda y: (reduce_from_tp(y), None), lambda _, g: (g,))


def make_loss_megatron_port(mesh):
    return jax.shard_map(_mlp(copy_to_tp, reduce_from_tp), mesh=mesh,
                         in_specs=(P(), P(None, "i"), P("i", None)), out_specs=P(), check_vma=False)
