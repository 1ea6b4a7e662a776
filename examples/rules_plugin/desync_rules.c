/* desync_rules.c — an example rule-set plugin that makes the ranks issue
 * different backward collectives: rank 0 answers an all_gather's backward
 * with the right reduce_scatter, the others with an all_reduce of the whole
 * gradient followed by their own slice (also a correct formula, but another
 * collective). Real backends get here through rank-dependent code paths
 * (a size check, a cache hit); the result is a hang or garbage, which
 * collgrad-check must report as "rank 1 issued all_reduce #2 (backward)
 * while rank 0 issued reduce_scatter #2 (backward)".
 *
 * Run: collgrad-check --check-sync --rules ./libdesync_rules.so CASES...  */
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static int all_reduce_then_slice(cg_rule_call *call)
{
    cg_tensor *gy = (cg_tensor *)call->gy;
    size_t *off = malloc((size_t)call->world * sizeof *off);
    if (!off)
        return cg_error_infra(call->st, "out of memory");
    cg_counts_offsets(call->counts->inputs, call->world, off);
    size_t start = off[call->rank], mine = call->counts->inputs[call->rank];
    free(off);
    if (cg_tp_all_reduce(call->tp, call->site, gy->data, gy->data, (size_t)gy->numel, gy->dtype, CGT_SUM) != 0)
        return cg_error(call->st, "%s", call->tp->st.msg);
    size_t esz = cg_dtype_size(gy->dtype);
    memcpy(call->gx->data, (const char *)gy->data + start * esz, mine * esz);
    return 0;
}

static int desync_backward(cg_rule_call *call)
{
    if (call->coll->kind == CG_C_ALL_GATHER && call->rank != 0)
        return all_reduce_then_slice(call);
    return cg_reference_backward(call);
}

static const cg_rules desync_rules = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "example-desync",
    .emulates = "example plugin: ranks other than 0 answer all_gather's backward with another collective",
    .see = "examples/rules_plugin/desync_rules.c",
    .wiring = cg_wiring_all_collective,
    .backward = desync_backward,
};

const cg_rules *collgrad_rules(void);
const cg_rules *collgrad_rules(void) { return &desync_rules; }
