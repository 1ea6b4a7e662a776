"""Ring attention in shard_map: the sequence is split over 'i'; each device
keeps its queries and passes its keys and values around the ring with
ppermute, W steps, folding each block into an online softmax; f returns
one loss per device. The planted bug: the ring's ppermute as a custom_vjp
(as hand-written ring backward passes are) whose backward sends the
cotangents the same way round as the forward, where they must go back.
At W=2 one step forward is one step back, so the bug cannot show there;
from W=3 it does.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

BLOCK, HEAD = 2, 3   # sequence positions per device, head dimension


def make_inputs(world):
    rng = np.random.RandomState(8)
    s = BLOCK * world
    return {"q": rng.standard_normal((s, HEAD)), "k": rng.standard_normal((s, HEAD)),
            "v": rng.standard_normal((s, HEAD)), "t": rng.standard_normal((s, HEAD))}


def _attention(world, shift):
    def body(q, k, v, t):
        m = jnp.full((BLOCK,), -jnp.inf)
        den = jnp.zeros((BLOCK,))
        out = jnp.zeros((BLOCK, HEAD))
        for _ in range(world):
            s = q @ k.T / jnp.sqrt(HEAD)
            m_new = jnp.maximum(m, s.max(axis=1))
            scale = jnp.exp(m - m_new)
            p = jnp.exp(s - m_new[:, None])
            den = den * scale + p.sum(axis=1)
            out = out * scale[:, None] + p @ v
            m = m_new
            k, v = shift(k), shift(v)
        return jnp.sum((out / den[:, None]) * t)[None]
    return body


def _ring(world):
    return [(d, (d + 1) % world) for d in range(world)]


def _shard(mesh, shift, check_vma=True):
    return jax.shard_map(_attention(mesh.size, shift), mesh=mesh, in_specs=(P("i", None),) * 4,
                         out_specs=P("i"), check_vma=check_vma)


def make_loss(mesh):
    perm = _ring(mesh.size)
    return _shard(mesh, lambda a: jax.lax.ppermute(a, "i", perm))


def make_loss_bug(mesh):
    perm = _ring(mesh.size)

    @jax.custom_vjp
    def shift(a):
        return jax.lax.ppermute(a, "i", perm)

    # the bug: the cotangent must go back to the sender (the inverse permutation); this sends it on
    shift.defvjp(lambda a: (shift(a), None), lambda _, g: (jax.lax.ppermute(g, "i", perm),))
    return _shard(mesh, shift, check_vma=False)
