/* rules_diffdist.c — the `diffdist` rule set: ag14774/diffdist
 * (diffdist/functions.py, diffdist/extra_collectives.py), the package the
 * PyTorch forum thread of seed 000 ends with.
 *
 *   AllGatherFunc.backward: extra_collectives.reduce_scatter, which issues
 *       dist.reduce(tensor_list[j], dst=j, SUM) for every rank j — the right
 *       numbers, but W collectives where one reduce_scatter would do;
 *   BroadcastFunc.backward: dist.reduce(grad_output, src, SUM) in place and
 *       returns grad_output on every rank, so a non-root keeps its own g
 *       instead of zero.
 *
 * Gather and scatter match the reference; diffdist has no all_reduce or
 * reduce backward (they raise NotImplementedError), so those are reference
 * here as well. */
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

/* W reduces: block j of g goes to rank j, which receives the sum into gx.
 * Where this rank is not the root the result is ignored, so it lands in a
 * buffer that is never read. */
static int issue_one_reduce_per_rank(cg_rule_call *call, const size_t *off, void *ignored)
{
    size_t esz = cg_dtype_size(call->gx->dtype);
    for (int j = 0; j < call->world; j++) {
        const char *block = (const char *)call->gy->data + off[j] * esz;
        void *recv = j == call->rank ? call->gx->data : ignored;
        if (cg_tp_reduce(call->tp, call->site, block, recv, call->counts->inputs[j], call->gx->dtype, CGT_SUM,
                         j) < 0)
            return cg_error(call->st, "%s", call->tp->st.msg);
    }
    return 0;
}

static int all_gather_by_reduces(cg_rule_call *call)
{
    if (check_same_dtype(call) < 0)
        return -1;
    size_t *off = malloc((size_t)call->world * sizeof *off);
    if (!off)
        return cg_error_infra(call->st, "out of memory");
    cg_counts_offsets(call->counts->inputs, call->world, off);
    size_t total = off[call->world - 1] + call->counts->inputs[call->world - 1], largest = 0;
    for (int j = 0; j < call->world; j++)
        largest = call->counts->inputs[j] > largest ? call->counts->inputs[j] : largest;
    void *ignored = NULL;
    cg_graph *scratch = NULL;
    int rc;
    if ((size_t)call->gx->numel != call->counts->inputs[call->rank] || (size_t)call->gy->numel != total)
        rc = cg_error(call->st, "gx has %lld elements and gy %lld, expected %zu and %zu",
                      (long long)call->gx->numel, (long long)call->gy->numel,
                      call->counts->inputs[call->rank], total);
    else if (!(scratch = cg_local_scratch(call)) ||
             !(ignored = cg_local_buffer(call, scratch, largest * cg_dtype_size(call->gx->dtype))))
        rc = -1;
    else
        rc = issue_one_reduce_per_rank(call, off, ignored);
    cg_graph_free(scratch);
    free(off);
    return rc;
}

/* reduce SUM to the root into gx; every other rank returns its own g. */
static int broadcast_keeping_gradient(cg_rule_call *call)
{
    size_t n = (size_t)call->gy->numel;
    if (check_same_dtype(call) < 0)
        return -1;
    if ((size_t)call->gx->numel != n)
        return cg_error(call->st, "gx has %lld elements but gy %zu", (long long)call->gx->numel, n);
    if (call->coll->root < 0 || call->coll->root >= call->world)
        return cg_error(call->st, "root %d is not a rank of a world of %d", call->coll->root,
                        call->world);
    if (cg_tp_reduce(call->tp, call->site, call->gy->data, call->gx->data, n, call->gx->dtype, CGT_SUM,
                     call->coll->root) < 0)
        return cg_error(call->st, "%s", call->tp->st.msg);
    if (call->rank != call->coll->root)
        return cg_local_copy(call, call->gx->data, call->gy->data,
                             n * cg_dtype_size(call->gx->dtype));
    return 0;
}

static int diffdist_backward(cg_rule_call *call)
{
    switch (call->coll->kind) {
    case CG_C_ALL_GATHER:
        return all_gather_by_reduces(call);
    case CG_C_BROADCAST:
        return broadcast_keeping_gradient(call);
    default:
        return cg_reference_backward(call);
    }
}

static const cg_backward_doc diffdist_docs[] = {
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "sum_r g_r[slice i] as W reduce calls, one per rank (the right numbers, "
                                     "W collectives)"},
    {CG_C_BROADCAST, CG_DOC_ANY_OP, "a reduce SUM to the root, and every non-root keeps its own g instead of 0"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_diffdist = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "diffdist",
    .emulates = "diffdist: all_gather backward as W reduce calls, broadcast backward keeps g on "
                "non-roots",
    .see = "ag14774/diffdist diffdist/functions.py, diffdist/extra_collectives.py",
    .wiring = cg_wiring_all_collective,
    .backward = diffdist_backward,
    .docs = diffdist_docs,
};
