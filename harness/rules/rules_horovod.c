/* rules_horovod.c — the `horovod` rule set: Horovod's autograd functions
 * (horovod/torch/mpi_ops.py; horovod/tensorflow/mpi_ops.py registers the
 * same gradients for TF):
 *
 *   HorovodAllgather.backward:
 *       grad_reduced = allreduce(grad_output, average=True)
 *       return grad_reduced.narrow(0, offset, ctx.dim)
 *     the average of g over ranks, own rows kept: 1/W of per-rank, right
 *     only under replicated semantics;
 *   HorovodReducescatter.backward:
 *       if ctx.op == Sum: grad_output *= ctx.process_set.size()
 *       return allgather(grad_output)
 *     W · cat_r g_r for SUM (Horovod issue #2654, "scaled by size"; the
 *     reference is cat_r g_r) and cat_r g_r for Average (the reference is
 *     cat_r g_r / W). Horovod's reducescatter accepts only SUM and AVERAGE
 *     (horovod/common/operations.cc), so the other ops raise here;
 *   HorovodBroadcast.backward:
 *       grad_reduced = allreduce(grad_output, average=True)
 *       if rank() != ctx.root_rank: grad_reduced *= 0
 *     Σ_r g_r / W at the root, zero elsewhere (the reference: Σ_r g_r);
 *   HorovodAllreduce.backward = allreduce(grad_output, op=ctx.op): right for
 *     Sum and Average, but Min, Max and Product (all accepted by Horovod's
 *     allreduce) reduce the gradient with the forward's op, as torch-nn does;
 *   HorovodAlltoall.backward = alltoall(grad_output, splits=ctx.recvsplits):
 *     the reference.
 *
 * Horovod has no reduce, gather or scatter; they are reference here. The
 * prescale and postscale factors are taken at their default of 1. */
#include "rules.h"
#include "rules_local.h"

#include <stdlib.h>
#include <string.h>

static int check_same_dtype(cg_rule_call *call)
{
    if (call->gy->dtype == call->gx->dtype)
        return 0;
    return cg_error(call->st, "gy is %s but gx is %s", cg_dtype_name(call->gy->dtype),
                    cg_dtype_name(call->gx->dtype));
}

/* gx = all_reduce(g, forward op): Horovod's allreduce gradient for every op. */
static int all_reduce_with_forward_op(cg_rule_call *call)
{
    size_t n = (size_t)call->x->numel;
    if (check_same_dtype(call) < 0)
        return -1;
    if ((size_t)call->gy->numel != n || (unsigned)call->coll->op >= CG_RED_COUNT)
        return cg_error(call->st, "gy has %lld elements, expected %zu (op %d)",
                        (long long)call->gy->numel, n, (int)call->coll->op);
    if (cg_tp_all_reduce(call->tp, call->site, call->gy->data, call->gx->data, n, call->gx->dtype,
                         cg_rules_tp_op(call->coll->op)) < 0)
        return cg_error(call->st, "%s", call->tp->st.msg);
    return 0;
}

/* Averages all of g into a scratch buffer, then keeps this rank's rows.
 * Horovod also allgathers the first dims to find the offset; counts->inputs
 * already holds them, and that call moves no gradient, so it is left out. */
static int all_gather_average(cg_rule_call *call)
{
    size_t start = 0, total = 0, mine = call->counts->inputs[call->rank];
    for (int r = 0; r < call->world; r++) {
        start += r < call->rank ? call->counts->inputs[r] : 0;
        total += call->counts->inputs[r];
    }
    if (check_same_dtype(call) < 0)
        return -1;
    if ((size_t)call->gx->numel != mine || (size_t)call->gy->numel != total)
        return cg_error(call->st, "gx has %lld elements and gy %lld, expected %zu and %zu",
                        (long long)call->gx->numel, (long long)call->gy->numel, mine, total);
    size_t esz = cg_dtype_size(call->gx->dtype);
    cg_graph *scratch = cg_local_scratch(call);
    char *avg = scratch ? cg_local_buffer(call, scratch, total * esz) : NULL;
    int rc = avg ? 0 : -1;
    if (rc == 0 && cg_tp_all_reduce(call->tp, call->site, call->gy->data, avg, total, call->gx->dtype, CGT_AVG) < 0)
        rc = cg_error(call->st, "%s", call->tp->st.msg);
    if (rc == 0)
        rc = cg_local_copy(call, call->gx->data, avg + start * esz, mine * esz);
    cg_graph_free(scratch);
    return rc;
}

/* all_gather(g), times W for SUM: the reference's SUM backward (cat_r g_r)
 * with Horovod's scaling on top. */
static int reduce_scatter_scaled(cg_rule_call *call)
{
    cg_redop op = call->coll->op;
    if (op != CG_RED_SUM && op != CG_RED_AVG)
        return cg_rules_unsupported(call, "horovod (reducescatter takes only sum and average)");
    cg_coll as_sum = *call->coll;
    as_sum.op = CG_RED_SUM;
    cg_rule_call summed = *call;
    summed.coll = &as_sum;
    if (cg_reference_backward(&summed) < 0)
        return -1;
    return cg_local_mul(call, call->gx, op == CG_RED_SUM ? call->world : 1.0);
}

/* Every rank averages g; only the root keeps it. Non-roots receive into a
 * scratch buffer, so their gx stays zero whatever its shape. */
static int broadcast_average(cg_rule_call *call)
{
    size_t n = (size_t)call->gy->numel;
    bool at_root = call->rank == call->coll->root;
    if (check_same_dtype(call) < 0)
        return -1;
    if (call->coll->root < 0 || call->coll->root >= call->world)
        return cg_error(call->st, "root %d is not a rank of a world of %d", call->coll->root,
                        call->world);
    if (at_root && (size_t)call->gx->numel != n)
        return cg_error(call->st, "gx has %lld elements but gy %zu", (long long)call->gx->numel, n);
    cg_graph *scratch = at_root ? NULL : cg_local_scratch(call);
    void *recv = at_root ? call->gx->data
                 : scratch ? cg_local_buffer(call, scratch, n * cg_dtype_size(call->gx->dtype))
                           : NULL;
    int rc = recv ? 0 : -1;
    if (rc == 0 && cg_tp_all_reduce(call->tp, call->site, call->gy->data, recv, n, call->gx->dtype, CGT_AVG) < 0)
        rc = cg_error(call->st, "%s", call->tp->st.msg);
    cg_graph_free(scratch);
    return rc;
}

static int horovod_backward(cg_rule_call *call)
{
    switch (call->coll->kind) {
    case CG_C_ALL_REDUCE:
        return all_reduce_with_forward_op(call);
    case CG_C_ALL_GATHER:
        return all_gather_average(call);
    case CG_C_REDUCE_SCATTER:
        return reduce_scatter_scaled(call);
    case CG_C_BROADCAST:
        return broadcast_average(call);
    default:
        return cg_reference_backward(call);
    }
}

static const cg_backward_doc horovod_docs[] = {
    {CG_C_ALL_REDUCE, CG_RED_PROD, "an allreduce PROD of g (the forward's op) instead of "
                                   "(sum_r g_r) * prod_{k != i} x_k"},
    {CG_C_ALL_REDUCE, CG_RED_MAX, "an allreduce MAX of g (the forward's op)"},
    {CG_C_ALL_REDUCE, CG_RED_MIN, "an allreduce MIN of g (the forward's op)"},
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "an allreduce AVERAGE of g, own rows kept: sum_r g_r[slice i] / W, 1/W "
                                     "of per-rank"},
    {CG_C_REDUCE_SCATTER, CG_RED_SUM, "W * allgather(g): cat_r g_r scaled by the world size (horovod#2654)"},
    {CG_C_REDUCE_SCATTER, CG_RED_AVG, "allgather(g): cat_r g_r, not divided by W"},
    {CG_C_REDUCE_SCATTER, CG_RED_PROD, "raises: Horovod's reducescatter takes sum and average only"},
    {CG_C_REDUCE_SCATTER, CG_RED_MAX, "raises: Horovod's reducescatter takes sum and average only"},
    {CG_C_REDUCE_SCATTER, CG_RED_MIN, "raises: Horovod's reducescatter takes sum and average only"},
    {CG_C_BROADCAST, CG_DOC_ANY_OP, "an allreduce AVERAGE of g kept at the root: sum_r g_r / W there, 0 "
                                    "elsewhere"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_horovod = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "horovod",
    .emulates = "Horovod: allgather and broadcast backward average g over ranks (1/W of "
                "per-rank), reduce_scatter SUM backward is W times all_gather(g), allreduce "
                "backward reuses the forward's op",
    .see = "horovod/torch/mpi_ops.py, horovod/tensorflow/mpi_ops.py; horovod/horovod#2654",
    .wiring = cg_wiring_all_collective,
    .backward = horovod_backward,
    .docs = horovod_docs,
};
