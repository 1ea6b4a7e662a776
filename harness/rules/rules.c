/* rules.c — the registry of built-in rule sets and the helpers they share. */
#include "rules.h"
#include "rules_local.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Reference first: a caller that wants "the right answer" takes entry 0. */
static const cg_rules *const builtin_rules[] = {
    &cg_rules_reference, &cg_rules_c10d,         &cg_rules_torch_nn,         &cg_rules_gatherlayer,
    &cg_rules_diffdist,  &cg_rules_torch_funcol, &cg_rules_horovod,          &cg_rules_torch_xla,
    &cg_rules_megatron,  &cg_rules_torch_nn_2_4, &cg_rules_torch_funcol_2_4, NULL,
};

const cg_rules *const *cg_rules_all(void) { return builtin_rules; }

const cg_rules *cg_rules_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; builtin_rules[i]; i++)
        if (strcmp(builtin_rules[i]->name, name) == 0)
            return builtin_rules[i];
    for (int i = 0; builtin_rules[i]; i++)
        if (cg_rules_name_covers(name, builtin_rules[i]->name))
            return builtin_rules[i];
    return NULL;
}

/* r's statement for (kind, op): one for that op first, then one for any op. */
static const char *own_doc(const cg_rules *r, cg_coll_kind kind, cg_redop op)
{
    const char *any = NULL;
    for (const cg_backward_doc *d = r->docs; d && d->kind != CG_C_COUNT; d++) {
        if (d->kind != kind)
            continue;
        if (cg_coll_has_op(kind) && d->op == (int)op)
            return d->text;
        if (d->op == CG_DOC_ANY_OP && !any)
            any = d->text;
    }
    return any;
}

/* An emulation states only what differs from the reference; a rule set
 * with no statements at all (a plugin that gives none) is not described. */
const char *cg_rules_describe(const cg_rules *r, cg_coll_kind kind, cg_redop op, bool *inherited)
{
    *inherited = false;
    if (!r || !r->docs)
        return NULL;
    const char *own = own_doc(r, kind, op);
    if (own || r == &cg_rules_reference)
        return own;
    *inherited = true;
    return own_doc(&cg_rules_reference, kind, op);
}

void cg_counts_offsets(const size_t *counts, int world, size_t *off)
{
    size_t sum = 0;
    for (int r = 0; r < world; r++) {
        off[r] = sum;
        sum += counts[r];
    }
}

/* Every collective gets an autograd node: all rule sets but c10d. */
cg_wiring cg_wiring_all_collective(const cg_coll *c)
{
    (void)c;
    return CG_WIRE_COLLECTIVE;
}

/* The two enums list the same ops, but the transport ABI is frozen on its
 * own, so map by name rather than by value. */
cgt_redop cg_rules_tp_op(cg_redop op)
{
    switch (op) {
    case CG_RED_SUM: return CGT_SUM;
    case CG_RED_AVG: return CGT_AVG;
    case CG_RED_PROD: return CGT_PROD;
    case CG_RED_MAX: return CGT_MAX;
    case CG_RED_MIN: return CGT_MIN;
    case CG_RED_COUNT: break;
    }
    return CGT_SUM;
}

/* "all_reduce(prod)", "reduce(sum, root 1)", "scatter(root 0)" */
static void describe_call(const cg_coll *c, char *buf, size_t len)
{
    const char *kind = cg_coll_name(c->kind);
    if (cg_coll_has_op(c->kind) && cg_coll_has_root(c->kind))
        snprintf(buf, len, "%s(%s, root %d)", kind, cg_redop_name(c->op), c->root);
    else if (cg_coll_has_op(c->kind))
        snprintf(buf, len, "%s(%s)", kind, cg_redop_name(c->op));
    else if (cg_coll_has_root(c->kind))
        snprintf(buf, len, "%s(root %d)", kind, c->root);
    else
        snprintf(buf, len, "%s", kind);
}

int cg_rules_backward(const cg_rules *r, cg_rule_call *call)
{
    if (r->backward(call) == 0)
        return 0;
    char what[96];
    describe_call(call->coll, what, sizeof what);
    /* the message may be an argument: cg_error formats before it stores */
    return cg_error(call->st, "backward of %s: %s", what,
                    call->st && call->st->msg[0] ? call->st->msg
                                                 : "the rule set failed without a message");
}

int cg_rules_unsupported(cg_rule_call *call, const char *by)
{
    return cg_error(call->st, "not supported by %s", by);
}

/* The local backwards below issue no collective, so a size or dtype that
 * disagrees would only make them read past a buffer: refuse it instead. */
static int check_local(cg_rule_call *call, size_t gx_want, size_t gy_want)
{
    if (call->gy->dtype != call->gx->dtype)
        return cg_error(call->st, "gy is %s but gx is %s", cg_dtype_name(call->gy->dtype),
                        cg_dtype_name(call->gx->dtype));
    if ((size_t)call->gx->numel != gx_want || (size_t)call->gy->numel != gy_want)
        return cg_error(call->st, "gx has %lld elements and gy %lld, expected %zu and %zu",
                        (long long)call->gx->numel, (long long)call->gy->numel, gx_want, gy_want);
    return 0;
}

int cg_rules_pass_gradient(cg_rule_call *call)
{
    size_t n = (size_t)call->x->numel;
    if (check_local(call, n, n) < 0)
        return -1;
    return cg_local_copy(call, call->gx->data, call->gy->data, n * cg_dtype_size(call->gx->dtype));
}

int cg_rules_keep_own_slice(cg_rule_call *call)
{
    size_t start = 0, total = 0;
    for (int r = 0; r < call->world; r++) {
        start += r < call->rank ? call->counts->inputs[r] : 0;
        total += call->counts->inputs[r];
    }
    size_t mine = call->counts->inputs[call->rank];
    if (check_local(call, mine, total) < 0)
        return -1;
    size_t esz = cg_dtype_size(call->gx->dtype);
    return cg_local_copy(call, call->gx->data, (const char *)call->gy->data + start * esz,
                         mine * esz);
}
