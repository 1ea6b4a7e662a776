/* rules_gatherlayer.c — the `gatherlayer` rule set: SimCLR's GatherLayer
 * (Spijkervet/SimCLR simclr/modules/gather.py), copied into many projects:
 *
 *   def backward(ctx, *grads):
 *       grad_out = torch.zeros_like(input)
 *       grad_out[:] = grads[dist.get_rank()]
 *
 * The all_gather backward keeps only this rank's slice of its own g and
 * drops the gradients the other ranks' losses send to x: right under
 * replicated semantics, 1/W of per-rank when every rank's loss is the same
 * function, and silently wrong otherwise (seed 003: 6 and 9 where per-rank
 * gives 12 and 18). The `all_x[rank] = x` trick and open_clip without
 * gather_with_grad compute the same. Every other collective is reference. */
#include "rules.h"
#include "rules_local.h"

#include <stdlib.h>
#include <string.h>

/* gx = g[offset of my rank, + my count]; no communication. */
static int own_slice_of_own_gradient(cg_rule_call *call)
{
    size_t *off = malloc((size_t)call->world * sizeof *off);
    if (!off)
        return cg_error_infra(call->st, "out of memory");
    cg_counts_offsets(call->counts->inputs, call->world, off);
    size_t mine = call->counts->inputs[call->rank];
    size_t total = off[call->world - 1] + call->counts->inputs[call->world - 1];
    size_t start = off[call->rank];
    free(off);
    if ((size_t)call->gx->numel != mine || (size_t)call->gy->numel != total)
        return cg_error(call->st, "gx has %lld elements and gy %lld, expected %zu and %zu",
                        (long long)call->gx->numel, (long long)call->gy->numel, mine, total);
    if (call->gy->dtype != call->gx->dtype)
        return cg_error(call->st, "gy is %s but gx is %s", cg_dtype_name(call->gy->dtype),
                        cg_dtype_name(call->gx->dtype));
    size_t esz = cg_dtype_size(call->gx->dtype);
    return cg_local_copy(call, call->gx->data, (const char *)call->gy->data + start * esz,
                         mine * esz);
}

static int gatherlayer_backward(cg_rule_call *call)
{
    if (call->coll->kind == CG_C_ALL_GATHER)
        return own_slice_of_own_gradient(call);
    return cg_reference_backward(call);
}

static const cg_backward_doc gatherlayer_docs[] = {
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "the own slice of the own g (dx_i = g_i[slice i]): the gradients other "
                                     "ranks' losses send to x_i are dropped"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_gatherlayer = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "gatherlayer",
    .emulates = "SimCLR GatherLayer: all_gather backward keeps the local slice of the local "
                "gradient only",
    .see = "Spijkervet/SimCLR simclr/modules/gather.py",
    .wiring = cg_wiring_all_collective,
    .backward = gatherlayer_backward,
    .docs = gatherlayer_docs,
};
