"""Functions the JAX check must refuse, each with a clear error and its exit
class (test_jax_cli.py)."""

import os
import signal
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    return {"x": np.linspace(-1.0, 1.0, 2 * world)}


def inputs_not_a_dict(world):
    return [1.0, 2.0]


def inputs_raise(world):
    raise RuntimeError("no data for this world")


def make_loss_raises(mesh):
    raise ValueError("cannot build the model")


def make_loss_not_callable(mesh):
    return 3.0


def make_loss_vector(mesh):   # a loss of shape [2W]: neither a scalar nor one per device
    return lambda x: x * 2


def make_loss_pmax(mesh):     # JAX has no differentiation rule for pmax
    return jax.shard_map(lambda x: jax.lax.pmax(jnp.sum(x), "i"), mesh=mesh, in_specs=P("i"), out_specs=P())


def make_loss_dies(mesh):
    print("about to die: this line must reach the error", flush=True)
    os._exit(9)


def make_loss_hangs(mesh):
    print("sleeping", file=sys.stderr, flush=True)
    time.sleep(600)


def make_loss_killed(mesh):
    os.kill(os.getpid(), signal.SIGKILL)


def _stall(x):
    time.sleep(600)


def make_loss_hangs_in_callback(mesh):   # stuck inside the computation, in a host callback of the user's
    def body(x):
        jax.debug.callback(_stall, x)
        return jax.lax.psum(jnp.sum(jnp.sin(x)), "i")
    return jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P())


def make_loss_random(mesh):   # a forward that does not repeat
    rng = np.random.RandomState()
    return lambda x: jnp.sum(jnp.cos(x)) * rng.standard_normal()  # drawn while tracing


def make_loss_right(mesh):
    return jax.shard_map(lambda x: jax.lax.psum(jnp.sum(jnp.sin(x)), "i"), mesh=mesh, in_specs=P("i"), out_specs=P())
