/* rules_torch_nn.c — the `torch-nn` rule sets: the autograd functions of
 * torch.distributed.nn (torch/distributed/nn/functional.py), in two version
 * windows. Both, as measured in 1.13, 2.4 and 2.15 over gloo:
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
 * elsewhere), _Gather, _Scatter and _AlltoAll match the reference on the
 * world. On a process group (tests/torch/findings-subgroups.txt):
 *   - _Broadcast zeroes every gradient but the source's, a non-member's too,
 *     although its output is its own input;
 *   - all_to_all_single (all_to_all with splits) is right for members;
 *   - all_gather, all_to_all, gather and scatter raise (group ranks passed
 *     where global ranks are meant), on some ranks at forward, on others at
 *     backward: modelled as a refusal of the call, raised in the phase each
 *     rank raises in (torch_nn_refuses_at); gather and scatter only where
 *     the root's group rank differs from its global rank (to global rank 0
 *     on [0, 2] both are right for the members; a non-member that calls
 *     them raises there too: not modelled, as for all_to_all_single).
 * torch-nn@2.4 adds pytorch#130515: _Broadcast keeps ctx.rank =
 * get_rank(group), a group rank, and compares it with the global src. */
#include "rules.h"
#include "rules_local.h"

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

/* A group whose rank k is not global rank k: where torch.distributed.nn
 * passes one for the other, and it shows. */
static bool ranks_renumbered(const cg_coll *c)
{
    for (int k = 0; k < c->nmembers; k++)
        if (c->members[k] != k)
            return true;
    return false;
}

/* _Gather and _Scatter compare the global root with get_rank(group): every
 * member agrees on who the root is exactly when the root's group rank is its
 * global rank (global rank 0 on [0, 2]; measured right in 1.13 and 2.15 by
 * tests/torch/probe_subgroups.py, findings-subgroups.txt). c->root counts in
 * group ranks. */
static bool root_keeps_its_number(const cg_coll *c)
{
    return c->root >= 0 && c->root < c->nmembers && c->members[c->root] == c->root;
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

/* pytorch#130515, _Broadcast.backward in 2.4:
 *     gx = _Reduce.apply(ctx.src, SUM, ctx.group, grad_output)
 *     if ctx.src != ctx.rank: gx.zero_()
 * with ctx.src global and ctx.rank = get_rank(group). The reduce leaves the
 * sum on the source and, gloo's reduce not touching the others' buffers,
 * each other rank's own g; then a rank keeps it where its group rank
 * equals the global src as a number. On the world both ranks agree. */
static int torch_nn_2_4_backward(cg_rule_call *call)
{
    const cg_coll *c = call->coll;
    if (c->kind != CG_C_BROADCAST)
        return torch_nn_backward(call);
    if (cg_reference_backward(call) != 0)
        return -1;
    size_t bytes = (size_t)call->gx->numel * cg_dtype_size(call->gx->dtype);
    int global_src = c->nmembers > 0 ? c->members[c->root] : c->root;
    if (call->rank == global_src) /* kept: the sum on the source, else the own g */
        return call->rank == c->root ? 0
                                     : cg_local_copy(call, call->gx->data, call->gy->data, bytes);
    cg_graph *scratch = cg_local_scratch(call); /* zeroed: gx.zero_() */
    const void *zeros = scratch ? cg_local_buffer(call, scratch, bytes) : NULL;
    int rc = zeros ? cg_local_copy(call, call->gx->data, zeros, bytes) : -1;
    cg_graph_free(scratch);
    return rc;
}

static const char *torch_nn_refuses(const cg_coll *c)
{
    if (!ranks_renumbered(c))
        return NULL;
    switch (c->kind) {
    case CG_C_ALL_GATHER:
        return "all_gather on a process group: gloo's backward is an _AlltoAll that scatters from "
               "group ranks as if global (\"Global rank 0 is not part of group\"), and a "
               "non-member gets no outputs to concatenate at forward (\"torch.cat(): expected a "
               "non-empty list of Tensors\") (tests/torch/findings-subgroups.txt)";
    case CG_C_ALL_TO_ALL: /* the list form; all_to_all_single (sized) works */
        return c->sized
                   ? NULL
                   : "all_to_all on a process group: _AlltoAll over gloo scatters from group ranks "
                     "as if global (\"Global rank 0 is not part of group\"; a non-member: "
                     "\"Invalid process group specified\") (tests/torch/findings-subgroups.txt)";
    case CG_C_GATHER:
        if (root_keeps_its_number(c))
            return NULL;
        return "gather on a process group: _Gather compares the global dst with get_rank(group), so "
               "the destination passes no gather_list (\"Argument ``gather_list`` must be specified on "
               "destination rank\", at forward in torch 1.13 and 2.15; a non-member gets no tensors to "
               "concatenate) (tests/torch/findings-subgroups.txt)";
    case CG_C_SCATTER:
        if (root_keeps_its_number(c))
            return NULL;
        return "scatter on a process group: _Scatter compares the global src with get_rank(group), "
               "so the source passes no scatter_list (\"Argument ``scatter_list`` must be "
               "specified "
               "on source rank\") (tests/torch/findings-subgroups.txt)";
    default: return NULL;
    }
}

/* Where each rank raises a refused call, as measured on [1, 2] of W = 3 in
 * torch 1.13, 2.4 and 2.15 (findings-subgroups.txt): all_gather's forward
 * goes through for the members, whose backward (an _AlltoAll scattering
 * from group ranks) raises, while a non-member gets no outputs to
 * concatenate at forward; gather and scatter raise at the root's forward
 * (the other member's raise there is only its peer's end), and a
 * non-member, whose forward has nothing to send, at backward; all_to_all
 * raises at forward everywhere. */
static cg_phase torch_nn_refuses_at(const cg_coll *c, bool member)
{
    switch (c->kind) {
    case CG_C_ALL_GATHER: return member ? CG_PHASE_BACKWARD : CG_PHASE_FORWARD;
    case CG_C_GATHER:
    case CG_C_SCATTER: return member ? CG_PHASE_FORWARD : CG_PHASE_BACKWARD;
    default: return CG_PHASE_FORWARD;
    }
}

/* A non-member's call, as measured: _Broadcast's backward zeroes it (its
 * rank is never src); all_reduce passes the gradient through. Not
 * modelled, so passed through as well: a non-member's all_to_all_single,
 * which returns its output buffer untouched and gives its input the
 * contents of a torch.empty (0 in the runs measured, by chance). */
static int torch_nn_nonmember_backward(cg_rule_call *call)
{
    if (call->coll->kind == CG_C_BROADCAST)
        return 0; /* gx stays zero */
    return cg_rules_pass_gradient(call);
}

/* What both versions say of the ops they get wrong; SUM and AVG of
 * all_reduce, and every op-less collective but broadcast, are reference. */
#define TORCH_NN_OP_DOCS                                                                           \
    {CG_C_ALL_REDUCE, CG_RED_PROD,                                                                 \
     "an all_reduce PROD of g (the forward's op) instead of (sum_r g_r) * prod_{k != i} x_k"},     \
        {CG_C_ALL_REDUCE, CG_RED_MAX,                                                              \
         "an all_reduce MAX of g (the forward's op) instead of sending sum_r g_r to the ranks "    \
         "that hold the max"},                                                                     \
        {CG_C_ALL_REDUCE, CG_RED_MIN,                                                              \
         "an all_reduce MIN of g (the forward's op) instead of sending sum_r g_r to the ranks "    \
         "that hold the min"},                                                                     \
        {CG_C_REDUCE_SCATTER, CG_RED_AVG,                                                          \
         "an all_gather of g, the op ignored: cat_r g_r, W times the truth"},                      \
        {CG_C_REDUCE_SCATTER, CG_RED_PROD,                                                         \
         "an all_gather of g, the op ignored: the product's factors are lost"},                    \
        {CG_C_REDUCE_SCATTER, CG_RED_MAX,                                                          \
         "an all_gather of g, the op ignored: every rank gets g, not only the max"},               \
        {CG_C_REDUCE_SCATTER, CG_RED_MIN,                                                          \
         "an all_gather of g, the op ignored: every rank gets g, not only the min"},               \
        {CG_C_REDUCE, CG_RED_AVG,                                                                  \
         "a broadcast of the root's g, the op ignored: W times the truth"},                        \
        {CG_C_REDUCE, CG_RED_PROD,                                                                 \
         "a broadcast of the root's g, the op ignored: the product's factors are lost"},           \
        {CG_C_REDUCE, CG_RED_MAX,                                                                  \
         "a broadcast of the root's g, the op ignored: every rank gets g, not only the max"},      \
    {                                                                                              \
        CG_C_REDUCE, CG_RED_MIN,                                                                   \
            "a broadcast of the root's g, the op ignored: every rank gets g, not only the min"     \
    }

static const cg_backward_doc torch_nn_docs[] = {
    {CG_C_BROADCAST, CG_DOC_ANY_OP,
     "a reduce SUM to src, then zeroed where the rank is not src: right for the world and a "
     "group's members, but a non-member, whose output is its own input, gets 0"},
    TORCH_NN_OP_DOCS,
    {CG_C_COUNT, 0, NULL},
};

/* torch-nn@2.4 differs in broadcast alone. */
static const cg_backward_doc torch_nn_2_4_docs[] = {
    {CG_C_BROADCAST, CG_DOC_ANY_OP,
     "a reduce SUM to the global src, then zeroed unless the rank's group rank equals that global "
     "src (pytorch#130515): on a subgroup the source's gradient is zeroed, and the member whose "
     "group rank is the src's number keeps its own g"},
    TORCH_NN_OP_DOCS,
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
    .refuses = torch_nn_refuses,
    .nonmember_backward = torch_nn_nonmember_backward,
    .refuses_at = torch_nn_refuses_at,
};

const cg_rules cg_rules_torch_nn_2_4 = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "torch-nn@2.4",
    .emulates = "torch.distributed.nn.functional in the pytorch#130515 window: torch-nn@1.13, and "
                "broadcast's backward compares the global src with a group rank",
    .see =
        "torch/distributed/nn/functional.py (_Broadcast: ctx.rank = dist.get_rank(group=group)); "
        "pytorch/pytorch#130515",
    .wiring = cg_wiring_all_collective,
    .backward = torch_nn_2_4_backward,
    .docs = torch_nn_2_4_docs,
    .measured =
        "torch 2.4.0 and 2.4.1 over gloo (tests/torch/findings-subgroups.txt); 1.13 and 2.15.0 "
        "do not have the bug",
    .refuses = torch_nn_refuses,
    .nonmember_backward = torch_nn_nonmember_backward,
    .refuses_at = torch_nn_refuses_at,
};
