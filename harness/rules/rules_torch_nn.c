/* rules_torch_nn.c — the `torch-nn` rule set: the autograd functions of
 * torch.distributed.nn (torch/distributed/nn/functional.py, unchanged in
 * these respects from v1.8 on):
 *
 *   _AllReduce.backward      = _AllReduce.apply(ctx.op, group, grad_output)
 *       an all_reduce of g with the forward's op: right for SUM, AVG gives
 *       Σg/W as well, but PROD, MAX and MIN are wrong (pytorch#58005:
 *       PRODUCT y=(rank+2)·xx gives 12, 18 instead of 30, 30);
 *   _Reduce_Scatter.backward = _AllGather.apply(group, grad_output)
 *       the op is ignored, so only SUM is right;
 *   _Reduce.backward         = _Broadcast.apply(src, group, grad_output)
 *       the op is ignored here too, so only SUM is right.
 *
 * _AllGather (reduce_scatter SUM of g), _Broadcast (reduce SUM to src, zero
 * elsewhere), _Gather, _Scatter and _AlltoAll match the reference. */
#include "rules.h"

/* What _AllReduce.backward does: the forward's op applied to g. */
static int all_reduce_with_forward_op(cg_rule_call *call)
{
    size_t n = (size_t)call->x->numel;
    if ((size_t)call->gy->numel != n || call->gx->numel != call->x->numel)
        return cg_error(call->st, "gy has %lld elements and gx %lld, expected %zu",
                        (long long)call->gy->numel, (long long)call->gx->numel, n);
    if (call->gy->dtype != call->gx->dtype)
        return cg_error(call->st, "gy is %s but gx is %s", cg_dtype_name(call->gy->dtype),
                        cg_dtype_name(call->gx->dtype));
    if ((unsigned)call->coll->op >= CG_RED_COUNT)
        return cg_error(call->st, "unknown reduction op %d", (int)call->coll->op);
    if (cg_tp_all_reduce(call->tp, call->site, call->gy->data, call->gx->data, n, call->gx->dtype,
                         cg_rules_tp_op(call->coll->op)) < 0)
        return cg_error(call->st, "%s", call->tp->st.msg);
    return 0;
}

/* The reference backward of the SUM version: what a backward that ignores
 * the forward's op computes. */
static int reference_as_if_sum(cg_rule_call *call)
{
    cg_coll as_sum = *call->coll;
    as_sum.op = CG_RED_SUM;
    cg_rule_call summed = *call;
    summed.coll = &as_sum;
    return cg_reference_backward(&summed);
}

static int torch_nn_backward(cg_rule_call *call)
{
    switch (call->coll->kind) {
    case CG_C_ALL_REDUCE:
        return all_reduce_with_forward_op(call);
    case CG_C_REDUCE_SCATTER:
    case CG_C_REDUCE:
        return reference_as_if_sum(call);
    default:
        return cg_reference_backward(call);
    }
}

/* SUM and AVG of all_reduce, and every op-less collective, are reference. */
static const cg_backward_doc torch_nn_docs[] = {
    {CG_C_ALL_REDUCE, CG_RED_PROD, "an all_reduce PROD of g (the forward's op) instead of "
                                   "(sum_r g_r) * prod_{k != i} x_k"},
    {CG_C_ALL_REDUCE, CG_RED_MAX, "an all_reduce MAX of g (the forward's op) instead of sending sum_r g_r "
                                  "to the ranks that hold the max"},
    {CG_C_ALL_REDUCE, CG_RED_MIN, "an all_reduce MIN of g (the forward's op) instead of sending sum_r g_r "
                                  "to the ranks that hold the min"},
    {CG_C_REDUCE_SCATTER, CG_RED_AVG, "an all_gather of g, the op ignored: cat_r g_r, W times the truth"},
    {CG_C_REDUCE_SCATTER, CG_RED_PROD, "an all_gather of g, the op ignored: the product's factors are lost"},
    {CG_C_REDUCE_SCATTER, CG_RED_MAX, "an all_gather of g, the op ignored: every rank gets g, not only the max"},
    {CG_C_REDUCE_SCATTER, CG_RED_MIN, "an all_gather of g, the op ignored: every rank gets g, not only the min"},
    {CG_C_REDUCE, CG_RED_AVG, "a broadcast of the root's g, the op ignored: W times the truth"},
    {CG_C_REDUCE, CG_RED_PROD, "a broadcast of the root's g, the op ignored: the product's factors are lost"},
    {CG_C_REDUCE, CG_RED_MAX, "a broadcast of the root's g, the op ignored: every rank gets g, not only the max"},
    {CG_C_REDUCE, CG_RED_MIN, "a broadcast of the root's g, the op ignored: every rank gets g, not only the min"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_torch_nn = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "torch-nn@1.13",
    .emulates = "torch.distributed.nn.functional: all_reduce backward reuses the forward's op, "
                "reduce_scatter and reduce backward ignore it",
    .see = "torch/distributed/nn/functional.py (_AllReduce, _Reduce_Scatter, _Reduce); "
           "pytorch/pytorch#58005",
    .wiring = cg_wiring_all_collective,
    .backward = torch_nn_backward,
    .docs = torch_nn_docs,
    .measured = "torch 1.13 and 2.15.0 over gloo (tests/torch/findings-1.13-gloo.txt, "
                "findings-2.15-gloo.txt, findings-subgroups.txt)",
};
