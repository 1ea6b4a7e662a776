/* own_slice_rules.c — an example rule-set plugin for collgrad-check: the
 * behaviour of SimCLR's GatherLayer (the built-in `gatherlayer`) under the
 * name "example-own-slice". The all_gather backward keeps only this rank's
 * slice of its own gradient and drops what the other ranks' losses send
 * back; every other collective uses the tool's reference backward.
 *
 * Build: cc -shared -fPIC $(pkg-config --cflags collgrad-check) \
 *            own_slice_rules.c -o libown_slice_rules.so
 * Run:   collgrad-check --rules ./libown_slice_rules.so CASES...
 *
 * cg_reference_backward, cg_counts_offsets, cg_error and the cg_dtype_*
 * helpers are not linked in: they resolve against the collgrad-check
 * executable, which exports them, when it dlopens this file. */
#include <stdlib.h>
#include <string.h>

#include "rules.h"

/* gx = gy[offset of my rank, + my count]; no communication. */
static int own_slice(cg_rule_call *call)
{
    size_t *off = malloc((size_t)call->world * sizeof *off);
    if (!off)
        return cg_error_infra(call->st, "out of memory");
    cg_counts_offsets(call->counts->inputs, call->world, off);
    size_t mine = call->counts->inputs[call->rank];
    size_t total = off[call->world - 1] + call->counts->inputs[call->world - 1];
    size_t start = off[call->rank];
    free(off);
    /* The copy below trusts these sizes: check them rather than read past gy. */
    if ((size_t)call->gx->numel != mine || (size_t)call->gy->numel != total)
        return cg_error(call->st, "gx has %lld elements and gy %lld, expected %zu and %zu",
                        (long long)call->gx->numel, (long long)call->gy->numel, mine, total);
    if (call->gy->dtype != call->gx->dtype)
        return cg_error(call->st, "gy is %s but gx is %s", cg_dtype_name(call->gy->dtype),
                        cg_dtype_name(call->gx->dtype));
    size_t esz = cg_dtype_size(call->gx->dtype);
    if (mine > 0)
        memcpy(call->gx->data, (const char *)call->gy->data + start * esz, mine * esz);
    return 0;
}

static int own_slice_backward(cg_rule_call *call)
{
    if (call->coll->kind == CG_C_ALL_GATHER)
        return own_slice(call);
    return cg_reference_backward(call);
}

/* What its backward does, in the words the diagnosis quotes (rules.h);
 * the kinds it does not list behave as the reference. */
static const cg_backward_doc own_slice_docs[] = {
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "the own slice of the own g: the other ranks' losses are dropped"},
    {CG_C_COUNT, 0, NULL},
};

static const cg_rules own_slice_rules = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "example-own-slice",
    .emulates = "example plugin: all_gather backward keeps the local slice of the local "
                "gradient only (SimCLR GatherLayer)",
    .see = "examples/rules_plugin/own_slice_rules.c",
    .wiring = cg_wiring_all_collective,
    .backward = own_slice_backward,
    .docs = own_slice_docs,
};

/* The one exported symbol (rules.h). */
const cg_rules *collgrad_rules(void);
const cg_rules *collgrad_rules(void) { return &own_slice_rules; }
