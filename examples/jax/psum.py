"""psum in a shard_map body: each device sums its block's loss, psum makes
the global loss. The planted bug: a psum wrapped in a custom_vjp whose
backward hands the cotangent on as it is (psum's transpose with check_vma
on), used in a shard_map with check_vma=False, whose transpose divides a
P() output's cotangent by W first (it cannot know the devices hold one
value): every gradient comes back x 1/W (per-device psum transpose
semantics: jax #3970).

    python -m collgrad_jax check examples/jax/psum.py:make_loss --inputs examples/jax/psum.py:make_inputs
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def make_inputs(world):
    rng = np.random.RandomState(1)
    return {"x": rng.standard_normal(4 * world), "w": rng.standard_normal(4 * world)}


def _loss(psum):
    def body(x, w):  # x, w: this device's blocks
        return psum(jnp.sum(jnp.tanh(x) * w))
    return body


def make_loss(mesh):
    return jax.shard_map(_loss(lambda v: jax.lax.psum(v, "i")), mesh=mesh, in_specs=(P("i"), P("i")),
                         out_specs=P())


@jax.custom_vjp
def psum_identity_bwd(v):
    return jax.lax.psum(v, "i")


def _fwd(v):
    return psum_identity_bwd(v), None


def _bwd(_, g):
    return (g,)  # the bug under check_vma=False: g arrives divided by W, and psum's transpose there is a psum


psum_identity_bwd.defvjp(_fwd, _bwd)


def make_loss_bug(mesh):
    return jax.shard_map(_loss(psum_identity_bwd), mesh=mesh, in_specs=(P("i"), P("i")), out_specs=P(),
                         check_vma=False)
