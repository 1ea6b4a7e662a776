/* rules_torch_xla.c — the `torch-xla` rule set: the autograd functions of
 * pytorch/xla (torch_xla/core/functions.py), discussed in pytorch/xla#2989:
 *
 *   AllReduce.backward(grad_output):
 *       grad = grad_output * ctx.scale
 *       REDUCE_SUM:            return grad
 *       REDUCE_MUL:            grad * where(input != 0, output / input, 0)
 *       REDUCE_MIN/REDUCE_MAX: where(input == output, grad, 0)
 *     all local: no rank sees another's gradient. SUM gives g_i where the
 *     per-rank truth is Σ_r g_r (right only under replicated semantics);
 *     PROD loses the other ranks' g and gives 0 where x_i is 0 even when
 *     Π_{k≠i} x_k is not; MIN/MAX give the whole g to every tied rank.
 *     XLA has no AVG op: a mean is REDUCE_SUM with scale = 1/W, whose
 *     backward is g / W, local as well;
 *   AllGather.backward: narrow(grad_output, dim, ordinal * slice, slice)
 *     the own slice of the own g, like SimCLR's GatherLayer. XLA's slice is
 *     numel / W (equal shapes only); here the slice follows counts->inputs, which
 *     is the same wherever XLA can run at all.
 *
 * torch_xla has no other differentiable collective; the rest is reference. */
#include "rules.h"
#include "rules_local.h"

static int all_reduce_local(cg_rule_call *call)
{
    int64_t n = call->x->numel;
    if ((unsigned)call->coll->op >= CG_RED_COUNT)
        return cg_error(call->st, "unknown reduction op %d", (int)call->coll->op);
    if (call->gy->dtype != call->gx->dtype)
        return cg_error(call->st, "gy is %s but gx is %s", cg_dtype_name(call->gy->dtype),
                        cg_dtype_name(call->gx->dtype));
    if (call->gy->numel != n || call->y->numel != n || call->gx->numel != n)
        return cg_error(call->st, "gy, y and gx have %lld, %lld and %lld elements, expected %lld",
                        (long long)call->gy->numel, (long long)call->y->numel,
                        (long long)call->gx->numel, (long long)n);
    size_t bytes = (size_t)n * cg_dtype_size(call->gx->dtype);
    switch (call->coll->op) {
    case CG_RED_SUM:
        return cg_local_copy(call, call->gx->data, call->gy->data, bytes);
    case CG_RED_AVG:
        if (cg_local_copy(call, call->gx->data, call->gy->data, bytes) < 0)
            return -1;
        return cg_local_div(call, call->gx, call->world);
    case CG_RED_PROD:
    case CG_RED_MAX:
    case CG_RED_MIN:
        return cg_local_xla_grad(call, call->coll->op == CG_RED_PROD, call->gy, call->x, call->y,
                                 call->gx);
    case CG_RED_COUNT:
        break;
    }
    return cg_error(call->st, "unknown reduction op %d", (int)call->coll->op);
}

static int torch_xla_backward(cg_rule_call *call)
{
    switch (call->coll->kind) {
    case CG_C_ALL_REDUCE:
        return all_reduce_local(call);
    case CG_C_ALL_GATHER:
        return cg_rules_keep_own_slice(call);
    default:
        return cg_reference_backward(call);
    }
}

static const cg_backward_doc torch_xla_docs[] = {
    {CG_C_ALL_REDUCE, CG_RED_SUM, "identity: each rank keeps its own g (dx_i = g_i); the other ranks' "
                                  "gradients are lost"},
    {CG_C_ALL_REDUCE, CG_RED_AVG, "g / W on each rank alone (a local scale): the other ranks' gradients "
                                  "are lost"},
    {CG_C_ALL_REDUCE, CG_RED_PROD, "g * y / x on each rank alone, 0 where x == 0: the other ranks' gradients "
                                   "are lost, and a zero input gets 0 even when the others' product is not 0"},
    {CG_C_ALL_REDUCE, CG_RED_MAX, "g where x == y on each rank alone: every tied rank gets the whole g, and "
                                  "the other ranks' gradients are lost"},
    {CG_C_ALL_REDUCE, CG_RED_MIN, "g where x == y on each rank alone: every tied rank gets the whole g, and "
                                  "the other ranks' gradients are lost"},
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "the own slice of the own g (dx_i = g_i[slice i])"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_torch_xla = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "torch-xla",
    .emulates = "torch_xla: all_reduce and all_gather backward are local (SUM identity, PROD "
                "g*out/in, MIN/MAX g where in == out, all_gather keeps the own slice)",
    .see = "pytorch/xla torch_xla/core/functions.py (AllReduce, AllGather); pytorch/xla#2989",
    .wiring = cg_wiring_all_collective,
    .backward = torch_xla_backward,
    .docs = torch_xla_docs,
};
