/* rules_reference.c — the `reference` rule set: design.md section 3, the
 * backward of every collective under per-rank semantics (the gradient on
 * x_i is d(sum_k L_k)/dx_i), written against the transport table only.
 *
 * Every rank issues the same collectives in the same order for a given call
 * (the worker runs it even where no gradient reached y: gy is then zero), so
 * no formula may branch on data before a collective, only on rank and root.
 *
 * The PROD/MAX/MIN factors are computed from x with helper all_reduces in
 * float64 whatever x's dtype, so a check measures the formula rather than the
 * rounding of a helper; the gradient itself travels in its own dtype. */
#include "rules.h"
#include "rules_local.h"

#include <string.h>

/* ---- sizes ------------------------------------------------------------------ */

static size_t sum_counts(const size_t *counts, int world)
{
    size_t sum = 0;
    for (int r = 0; r < world; r++)
        sum += counts[r];
    return sum;
}

/* A receive buffer the transport ignores on this rank (non-roots): gx must
 * stay zero there, so it never gets gx. */
static void *ignored_buffer(cg_rule_call *c, cg_graph *s, size_t n)
{
    return cg_local_buffer(c, s, n * cg_dtype_size(c->gx->dtype));
}

/* Sizes that disagree with the counts would make the transport read or
 * write past a buffer, so they are an error, never a guess. */
static int expect_numel(cg_rule_call *c, const char *what, const cg_tensor *t, size_t want)
{
    if ((size_t)t->numel == want)
        return 0;
    return cg_error(c->st, "%s has %lld elements on rank %d, expected %zu", what,
                    (long long)t->numel, c->rank, want);
}

/* ---- the op's local factor: d(op_k x_k)[e] / dx_i[e] ----------------------- */

/* Π_{k≠i} x_k, exact with zeros: the number of zeros and the product of the
 * nonzero values say it without ever dividing by a zero x_i. */
static int scale_by_product_of_others(cg_rule_call *c, cg_graph *s)
{
    const cg_tensor *x = c->x;
    size_t n = (size_t)x->numel;
    int64_t len = x->numel;
    cg_tensor *zeros = cg_tensor_new(s, CG_F64, 1, &len);
    cg_tensor *nonzero_prod = cg_tensor_new(s, CG_F64, 1, &len);
    if (!zeros || !nonzero_prod)
        return cg_error_infra(c->st, "out of memory");
    if (cg_local_prod_split(c, x, zeros, nonzero_prod) < 0)
        return -1;
    if (cg_tp_all_reduce(c->tp, c->site, zeros->data, zeros->data, n, CG_F64, CGT_SUM) < 0 ||
        cg_tp_all_reduce(c->tp, c->site, nonzero_prod->data, nonzero_prod->data, n, CG_F64, CGT_PROD) < 0)
        return cg_error(c->st, "%s", c->tp->st.msg);
    return cg_local_prod_scale(c, x, zeros, nonzero_prod, c->gx);
}

/* [x_i == m] / #ties, m = max (or min) over ranks: ties share the gradient
 * evenly, like torch.amax. `extremum` is m when this rank holds it whole
 * (all_reduce's y); otherwise an all_reduce of x finds it. */
static int scale_by_tie_share(cg_rule_call *c, cg_graph *s, const cg_tensor *extremum)
{
    const cg_tensor *x = c->x;
    size_t n = (size_t)x->numel;
    int64_t len = x->numel;
    if (!extremum) {
        cg_tensor *m = cg_tensor_cast(s, x, x->dtype);
        if (!m)
            return cg_error_infra(c->st, "out of memory");
        if (cg_tp_all_reduce(c->tp, c->site, m->data, m->data, n, m->dtype, cg_rules_tp_op(c->coll->op)) < 0)
            return cg_error(c->st, "%s", c->tp->st.msg);
        extremum = m;
    }
    cg_tensor *ties = cg_tensor_new(s, CG_F64, 1, &len);
    if (!ties)
        return cg_error_infra(c->st, "out of memory");
    if (cg_local_equal_mask(c, x, extremum, ties) < 0)
        return -1;
    if (cg_tp_all_reduce(c->tp, c->site, ties->data, ties->data, n, CG_F64, CGT_SUM) < 0)
        return cg_error(c->st, "%s", c->tp->st.msg);
    return cg_local_tie_scale(c, x, extremum, ties, c->gx);
}

/* gx (the summed gradient of op_k x_k, laid out like x) times the local
 * factor of the forward op. */
static int scale_by_local_factor(cg_rule_call *c, cg_graph *s, const cg_tensor *extremum)
{
    switch (c->coll->op) {
    case CG_RED_SUM:
        return 0;
    case CG_RED_AVG:
        return cg_local_div(c, c->gx, c->world);
    case CG_RED_PROD:
        return scale_by_product_of_others(c, s);
    case CG_RED_MAX:
    case CG_RED_MIN:
        return scale_by_tie_share(c, s, extremum);
    case CG_RED_COUNT:
        break;
    }
    return cg_error(c->st, "unknown reduction op %d", (int)c->coll->op);
}

/* ---- the transpose: one collective on g, the forward's counts swapped ------ */

/* Elements of the forward's output on this rank, by its shape rule. */
static size_t forward_out_count(const cg_rule_call *c, const cg_coll_counts *f)
{
    const cg_collective *d = cg_collective_of(c->coll->kind);
    bool has_output = !d->root_only_output || c->rank == c->coll->root;
    switch (d->shape) {
    case CG_SHAPE_CAT: return has_output ? sum_counts(f->inputs, c->world) : 0;
    case CG_SHAPE_BLOCK: return f->blocks[c->rank];
    case CG_SHAPE_BLOCKS: return sum_counts(f->recv, c->world);
    default: return (size_t)c->x->numel;
    }
}

/* The transpose's counts: what the forward gathered it splits and what it
 * split it gathers; all_to_all sends back what it received. */
static void transposed_counts(const cg_collective *t, const cg_coll_counts *f, cg_coll_counts *out)
{
    memcpy(out->inputs, f->blocks, sizeof out->inputs);
    memcpy(out->blocks, t->shape == CG_SHAPE_BLOCKS ? f->recv : f->inputs, sizeof out->blocks);
    memcpy(out->recv, f->blocks, sizeof out->recv);
}

/* dx_i = (the transpose of the forward applied to g)_i · factor_i: the
 * forward's collective run backwards as a sum (design.md section 3), then the
 * local factor of its reduction op. The transpose's output lands in gx;
 * where it is meaningful only at the root, the other ranks' gx must stay
 * zero. A reduce (broadcast's transpose) receives into gx itself, which the
 * transport leaves alone off the root (collgrad_transport.h): a transport
 * that writes there anyway shows as a wrong gradient, not a hidden one, and
 * no rank holds a spare copy of x's size. A gather's output is W times
 * larger than gx, so there a scratch buffer of its size takes the place. */
static int transpose_backward(cg_rule_call *c, cg_graph *s)
{
    const cg_collective *d = cg_collective_of(c->coll->kind), *t = cg_collective_of(d->transpose);
    const cg_coll_counts *f = c->counts;
    cg_coll_counts *tc = cg_alloc(s, sizeof *tc);
    if (!tc)
        return cg_error_infra(c->st, "out of memory");
    transposed_counts(t, f, tc);
    if (expect_numel(c, "x", c->x, f->inputs[c->rank]) < 0 ||
        expect_numel(c, "gy", c->gy, forward_out_count(c, f)) < 0)
        return -1;
    size_t n = (size_t)c->x->numel;
    bool at_root = c->rank == c->coll->root;
    void *recv = c->gx->data;
    if (t->in_place && at_root && /* the root's g goes out in place: start from it */
        cg_local_copy(c, c->gx->data, c->gy->data, n * cg_dtype_size(c->gx->dtype)) < 0)
        return -1;
    if (t->root_only_output && !at_root && t->shape == CG_SHAPE_CAT &&
        !(recv = ignored_buffer(c, s, sum_counts(tc->inputs, c->world))))
        return -1;
    if (cg_tp_collective(c->tp, c->site, t->kind, CGT_SUM, c->coll->root, c->gy->data, recv, n, tc, c->gx->dtype) < 0)
        return cg_error(c->st, "%s", c->tp->st.msg);
    if (!cg_coll_has_op(d->kind))
        return 0;
    /* all_reduce's y is the extremum whole on every rank; the others find it */
    bool whole = d->shape == CG_SHAPE_SAME && !d->root_only_output;
    return scale_by_local_factor(c, s, whole ? c->y : NULL);
}

bool cg_reference_fills_gx(const cg_coll *c, int rank)
{
    const cg_collective *d = cg_collective_of(c->kind);
    if (!d || d->p2p)
        return false;
    return !cg_collective_of(d->transpose)->root_only_output || rank == c->root;
}

static int check_call(cg_rule_call *c)
{
    cg_coll_kind k = c->coll->kind;
    const cg_collective *d = cg_collective_of(k);
    if (!d || d->p2p)
        return cg_error(c->st,
                        "no backward formula: %s is not a collective (the worker "
                        "wires send and recv itself)",
                        cg_coll_name(k));
    if (c->x->dtype != c->gx->dtype || c->gy->dtype != c->gx->dtype)
        return cg_error(c->st, "dtypes differ: x %s, gy %s, gx %s", cg_dtype_name(c->x->dtype),
                        cg_dtype_name(c->gy->dtype), cg_dtype_name(c->gx->dtype));
    if (c->gx->numel != c->x->numel)
        return cg_error(c->st, "gx has %lld elements but x has %lld", (long long)c->gx->numel,
                        (long long)c->x->numel);
    if (cg_coll_has_root(k) && (c->coll->root < 0 || c->coll->root >= c->world))
        return cg_error(c->st, "root %d is not a rank of a world of %d", c->coll->root, c->world);
    return 0;
}

int cg_reference_backward(cg_rule_call *call)
{
    if (check_call(call) < 0)
        return -1;
    cg_graph *scratch = cg_local_scratch(call);
    if (!scratch)
        return -1;
    int rc = transpose_backward(call, scratch);
    cg_graph_free(scratch);
    return rc;
}

/* What each backward computes (design.md section 3), in the words the
 * diagnosis quotes; g_r is the gradient at rank r's output. */
static const cg_backward_doc reference_docs[] = {
    {CG_C_ALL_REDUCE, CG_RED_SUM, "dx_i = sum_r g_r (an all_reduce SUM of g)"},
    {CG_C_ALL_REDUCE, CG_RED_AVG, "dx_i = sum_r g_r / W (an all_reduce AVG of g)"},
    {CG_C_ALL_REDUCE, CG_RED_PROD, "dx_i = (sum_r g_r) * prod_{k != i} x_k, exact where inputs are 0"},
    {CG_C_ALL_REDUCE, CG_RED_MAX, "dx_i = (sum_r g_r) * [x_i == y] / #ties: tied ranks share the gradient"},
    {CG_C_ALL_REDUCE, CG_RED_MIN, "dx_i = (sum_r g_r) * [x_i == y] / #ties: tied ranks share the gradient"},
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "dx_i = sum_r g_r[slice i] (a reduce_scatter SUM of g)"},
    {CG_C_REDUCE_SCATTER, CG_RED_SUM, "dx_i = cat_r g_r (an all_gather of g)"},
    {CG_C_REDUCE_SCATTER, CG_RED_AVG, "dx_i = cat_r g_r / W (an all_gather of g, divided by W)"},
    {CG_C_REDUCE_SCATTER, CG_RED_PROD, "dx_i = cat_r g_r * prod_{k != i} x_k, slice by slice, exact at 0"},
    {CG_C_REDUCE_SCATTER, CG_RED_MAX, "dx_i = cat_r g_r * [x_i == y] / #ties, slice by slice"},
    {CG_C_REDUCE_SCATTER, CG_RED_MIN, "dx_i = cat_r g_r * [x_i == y] / #ties, slice by slice"},
    {CG_C_BROADCAST, CG_DOC_ANY_OP, "dx_root = sum_r g_r (a reduce SUM to the root); dx_i = 0 elsewhere"},
    {CG_C_REDUCE, CG_RED_SUM, "dx_i = g_root (a broadcast from the root)"},
    {CG_C_REDUCE, CG_RED_AVG, "dx_i = g_root / W (a broadcast from the root, divided by W)"},
    {CG_C_REDUCE, CG_RED_PROD, "dx_i = g_root * prod_{k != i} x_k, exact where inputs are 0"},
    {CG_C_REDUCE, CG_RED_MAX, "dx_i = g_root * [x_i == y] / #ties"},
    {CG_C_REDUCE, CG_RED_MIN, "dx_i = g_root * [x_i == y] / #ties"},
    {CG_C_GATHER, CG_DOC_ANY_OP, "dx_i = g_root[slice i] (a scatter from the root)"},
    {CG_C_SCATTER, CG_DOC_ANY_OP, "dx_root = cat_r g_r (a gather to the root); dx_i = 0 elsewhere"},
    {CG_C_ALL_TO_ALL, CG_DOC_ANY_OP, "dx_i[j] = g_j[i] (an all_to_all of g, the splits swapped)"},
    {CG_C_SEND, CG_DOC_ANY_OP, "send's backward receives the gradient from the destination and adds it to dx"},
    {CG_C_RECV, CG_DOC_ANY_OP, "recv's backward sends g back to the source"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_reference = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "reference",
    .emulates = "the correct backward of every collective under per-rank semantics",
    .see = "docs/design.md section 3; pytorch/pytorch#58005",
    .wiring = cg_wiring_all_collective,
    .backward = cg_reference_backward,
    .docs = reference_docs,
};
