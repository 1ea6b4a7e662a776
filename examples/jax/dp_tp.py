"""Data and tensor parallelism on a 2-D mesh (dp, tp): the batch split over
dp, an MLP's W1 split by columns and W2 by rows over tp, the partial outputs
psum'd over tp and the losses over dp; one global loss. Checked with
mesh={"dp": 2, "tp": 2}. shard_map's transpose sums each weight's
gradient over dp itself (the weights do not vary along dp). The planted bug
is a data-parallel gradient sync written by hand as well, as ported from a
DDP loop: a custom_vjp on W1 whose backward psums over dp again, so W1's
gradient comes back x 2, the size of dp.

    python -m collgrad_jax check examples/jax/dp_tp.py:make_loss --inputs examples/jax/dp_tp.py:make_inputs --mesh dp=2,tp=2
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

ROWS_PER_DP, DIM, HIDDEN_PER_TP = 2, 3, 2


def make_inputs(world):
    rng = np.random.RandomState(10)
    dp, tp = 2, world // 2
    return {"x": rng.standard_normal((ROWS_PER_DP * dp, DIM)), "w1": rng.standard_normal((DIM, HIDDEN_PER_TP * tp)),
            "w2": rng.standard_normal((HIDDEN_PER_TP * tp, DIM)) / 2}


def _loss(sync):
    def body(x, w1, w2):  # x: this dp group's rows; w1, w2: this tp column / row block
        y = jax.lax.psum(jax.nn.gelu(x @ sync(w1)) @ w2, "tp")
        return jax.lax.psum(jnp.sum(y * y), "dp")
    return body


def _shard(mesh, sync):
    return jax.shard_map(_loss(sync), mesh=mesh, in_specs=(P("dp", None), P(None, "tp"), P("tp", None)),
                         out_specs=P())


def make_loss(mesh):
    return _shard(mesh, lambda w: w)


@jax.custom_vjp
def sync_dp(w):
    return w


sync_dp.defvjp(lambda w: (w, None), lambda _, g: (jax.lax.psum(g, "dp"),))  # the bug: shard_map already sums


def make_loss_dp_sync_twice(mesh):
    return _shard(mesh, sync_dp)
