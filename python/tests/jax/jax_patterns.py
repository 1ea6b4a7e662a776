"""JAX code whose wrong gradients the patterns must name truly (issue 60 item 7)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    return {"x": np.linspace(0.1, 0.9, 2 * world), "w": np.array([1.0, -1.0, 2.0])}


def _send_forward(x):
    return jax.lax.ppermute(x, "i", [(0, 1)])


@jax.custom_vjp
def _send_wrong_way(x):
    return _send_forward(x)


# the backward sends the cotangent forward again, where it must go back (1 -> 0)
_send_wrong_way.defvjp(lambda x: (_send_forward(x), None), lambda _, g: (_send_forward(g),))


def make_loss_pipeline_wrong_way(mesh):
    """Two stages on devices 0 and 1: device 0 computes, sends; device 1's loss
    is the pipeline's, device 0's is 0 (one loss per device)."""
    def body(x, w):
        h = jnp.tanh(x * w[0])
        got = _send_wrong_way(h)
        last = jax.lax.axis_index("i") == 1
        return jnp.where(last, jnp.sum(got * 2.0), 0.0)[None]
    return jax.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i"))


def make_loss_where_sqrt(mesh):
    """The where/sqrt trap: the loss is finite, the gradient of w[1] (< 0) is nan."""
    def body(x, w):
        s = jnp.sum(jnp.where(w > 0, jnp.sqrt(w), 0.0))
        return jax.lax.psum(jnp.sum(x) * s, "i")
    return jax.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P())
