"""The user-code examples as pytest tests, through the collgrad plugin:

    pytest examples/user_code/test_examples.py

Each marked test is one test per world size (test_sum_nn[W=2], [W=4]); the
plugin runs it on W ranks (warm worlds, started once per world size for the
session) and compares every rank's gradients with finite differences of the
global loss. The buggy examples are the known bugs their modules' docstrings
work out by hand, marked xfail(strict=True): the session passes while each
still fails, and --collgrad-json DIR keeps the pattern each one matches.
"""

import pytest

import custom_function
import data_parallel
import megatron_tp
import moe
import seed_allreduce
import seed_gatherlayer
import subgroup
import all_to_all

collgrad = pytest.mark.collgrad
known_bug = pytest.mark.xfail(strict=True, reason="a known bug this example reproduces")


# seeds/002 (#58005): torch.distributed.nn.all_reduce is right for a sum ...
@collgrad(world=[2, 4], inputs=seed_allreduce.make_inputs)
def test_sum_nn(rank, world, x):
    return seed_allreduce.sum_nn(rank, world, x)


# ... c10d's all_reduce has no autograd: each rank's gradient is its own loss's only
@known_bug
@collgrad(world=[2, 4], inputs=seed_allreduce.make_inputs)
def test_sum_c10d(rank, world, x):
    return seed_allreduce.sum_c10d(rank, world, x)


@known_bug
@collgrad(world=[2, 4], inputs=seed_allreduce.make_inputs)
def test_product_nn(rank, world, x):
    return seed_allreduce.product_nn(rank, world, x)


# seeds/003: the blog's GatherLayer halves the gradient; SimCLR's and diffdist's are right
@known_bug
@collgrad(world=[2, 4], inputs=seed_gatherlayer.make_inputs)
def test_blog_gatherlayer(rank, world, y):
    return seed_gatherlayer.blog_gatherlayer(rank, world, y)


@collgrad(world=[2, 4], inputs=seed_gatherlayer.make_inputs)
def test_simclr_gatherlayer(rank, world, y):
    return seed_gatherlayer.simclr_gatherlayer(rank, world, y)


@collgrad(world=[2, 4], inputs=seed_gatherlayer.make_inputs)
def test_diffdist_gather(rank, world, y):
    return seed_gatherlayer.diffdist_gather(rank, world, y)


@collgrad(world=[2, 4], inputs=subgroup.make_inputs)
def test_pair_all_reduce(rank, world, x):
    return subgroup.pair_all_reduce(rank, world, x)


@known_bug
@collgrad(world=[2, 4], inputs=subgroup.make_inputs)
def test_pair_all_reduce_twice(rank, world, x):
    return subgroup.pair_all_reduce_twice(rank, world, x)


@collgrad(world=[2, 4], inputs=subgroup.make_pair_dp_inputs, step=True)
def test_pair_dp_step(rank, world, **inputs):
    return subgroup.pair_dp_step(rank, world, **inputs)


@known_bug
@collgrad(world=[2, 4], inputs=subgroup.make_pair_dp_inputs, step=True)
def test_pair_dp_step_no_sync(rank, world, **inputs):
    return subgroup.pair_dp_step_no_sync(rank, world, **inputs)


@collgrad(world=[2, 4], inputs=all_to_all.make_inputs)
def test_uneven(rank, world, x):
    return all_to_all.uneven(rank, world, x)


# Megatron-style tensor and sequence parallelism (every rank computes the same loss)
@collgrad(world=[2, 4], inputs=megatron_tp.make_inputs, semantics="replicated")
def test_tp_mlp(rank, world, **inputs):
    return megatron_tp.tp_mlp(rank, world, **inputs)


@known_bug
@collgrad(world=[2, 4], inputs=megatron_tp.make_inputs, semantics="replicated")
def test_tp_mlp_identity_backward(rank, world, **inputs):
    return megatron_tp.tp_mlp_identity_backward(rank, world, **inputs)


@known_bug
@collgrad(world=[2, 4], inputs=megatron_tp.make_inputs, semantics="replicated")
def test_tp_mlp_discarded_copy(rank, world, **inputs):
    return megatron_tp.tp_mlp_discarded_copy(rank, world, **inputs)


@collgrad(world=[2, 4], inputs=megatron_tp.make_sp_inputs)
def test_sp_mlp(rank, world, **inputs):
    return megatron_tp.sp_mlp(rank, world, **inputs)


@known_bug
@collgrad(world=[2, 4], inputs=megatron_tp.make_sp_inputs)
def test_sp_mlp_double_reduce(rank, world, **inputs):
    return megatron_tp.sp_mlp_double_reduce(rank, world, **inputs)


# expert parallelism (pytorch #160285's shape)
@collgrad(world=[2, 4], inputs=moe.make_inputs)
def test_moe(rank, world, **inputs):
    return moe.moe(rank, world, **inputs)


@known_bug
@collgrad(world=[2, 4], inputs=moe.make_inputs)
def test_moe_expert_grad_doubled(rank, world, **inputs):
    return moe.moe_expert_grad_doubled(rank, world, **inputs)


# training steps that run their own backward and gradient sync (the check reads .grad)
@collgrad(world=[2, 4], inputs=data_parallel.make_inputs, step=True, reduction="mean")
def test_ddp_step(rank, world, **inputs):
    return data_parallel.ddp_step(rank, world, **inputs)


@known_bug
@collgrad(world=[2, 4], inputs=data_parallel.make_inputs, step=True, reduction="mean")
def test_allreduce_step_no_divide(rank, world, **inputs):
    return data_parallel.allreduce_step_no_divide(rank, world, **inputs)


@known_bug
@collgrad(world=[2, 4], inputs=custom_function.make_inputs)
def test_wrong_cube(rank, world, x):
    return custom_function.wrong_cube(rank, world, x)
