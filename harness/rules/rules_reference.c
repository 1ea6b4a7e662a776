/* rules_reference.c — the `reference` rule set: DESIGN section 3, the
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

typedef int (*backward_fn)(cg_rule_call *c, cg_graph *scratch);

/* ---- sizes and row blocks ------------------------------------------------ */

/* A 0-d tensor counts as one row of one element. */
static int64_t rows_of(const cg_tensor *t) { return t->ndim == 0 ? 1 : t->shape[0]; }

static int64_t row_size(const cg_tensor *t)
{
    int64_t n = 1;
    for (int d = 1; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

/* counts[r] = elements in rank r's block of a balanced split of `rows` rows. */
static void row_block_counts(int64_t rows, int64_t rowsize, int world, size_t *counts)
{
    for (int r = 0; r < world; r++) {
        int64_t block = cg_chunk_lo(rows, world, r + 1) - cg_chunk_lo(rows, world, r);
        counts[r] = (size_t)(block * rowsize);
    }
}

static size_t sum_counts(const size_t *counts, int world)
{
    size_t sum = 0;
    for (int r = 0; r < world; r++)
        sum += counts[r];
    return sum;
}

static size_t *new_counts(cg_rule_call *c, cg_graph *s)
{
    size_t *counts = cg_alloc(s, (size_t)c->world * sizeof *counts);
    if (!counts)
        cg_rules_fail(c, "out of memory");
    return counts;
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
    return cg_rules_fail(c, "%s has %lld elements on rank %d, expected %zu", what,
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
        return cg_rules_fail(c, "out of memory");
    if (cg_local_prod_split(c, x, zeros, nonzero_prod) < 0)
        return -1;
    if (cg_tp_all_reduce(c->tp, zeros->data, zeros->data, n, CG_F64, CGT_SUM) < 0 ||
        cg_tp_all_reduce(c->tp, nonzero_prod->data, nonzero_prod->data, n, CG_F64, CGT_PROD) < 0)
        return cg_rules_tp_fail(c);
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
            return cg_rules_fail(c, "out of memory");
        if (cg_tp_all_reduce(c->tp, m->data, m->data, n, m->dtype, cg_rules_tp_op(c->coll->op)) < 0)
            return cg_rules_tp_fail(c);
        extremum = m;
    }
    cg_tensor *ties = cg_tensor_new(s, CG_F64, 1, &len);
    if (!ties)
        return cg_rules_fail(c, "out of memory");
    if (cg_local_equal_mask(c, x, extremum, ties) < 0)
        return -1;
    if (cg_tp_all_reduce(c->tp, ties->data, ties->data, n, CG_F64, CGT_SUM) < 0)
        return cg_rules_tp_fail(c);
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
    return cg_rules_fail(c, "unknown reduction op %d", (int)c->coll->op);
}

/* ---- one backward per collective ------------------------------------------ */

/* dx_i = (Σ_r g_r) · factor_i */
static int all_reduce_backward(cg_rule_call *c, cg_graph *s)
{
    size_t n = (size_t)c->x->numel;
    if (expect_numel(c, "gy", c->gy, n) < 0 || expect_numel(c, "y", c->y, n) < 0)
        return -1;
    if (cg_tp_all_reduce(c->tp, c->gy->data, c->gx->data, n, c->gx->dtype, CGT_SUM) < 0)
        return cg_rules_tp_fail(c);
    return scale_by_local_factor(c, s, c->y);
}

/* dx_i = Σ_r g_r[slice i]: one reduce_scatter, not W reduces. */
static int all_gather_backward(cg_rule_call *c, cg_graph *s)
{
    (void)s;
    size_t total = sum_counts(c->in_counts, c->world);
    if (expect_numel(c, "gx", c->gx, c->in_counts[c->rank]) < 0 ||
        expect_numel(c, "gy", c->gy, total) < 0)
        return -1;
    if (cg_tp_reduce_scatter(c->tp, c->gy->data, c->gx->data, c->in_counts, c->gx->dtype,
                             CGT_SUM) < 0)
        return cg_rules_tp_fail(c);
    return 0;
}

/* dx_i = (cat_r g_r) · factor_i, the blocks split x's rows. */
static int reduce_scatter_backward(cg_rule_call *c, cg_graph *s)
{
    size_t *counts = new_counts(c, s);
    if (!counts)
        return -1;
    row_block_counts(rows_of(c->x), row_size(c->x), c->world, counts);
    if (expect_numel(c, "gy", c->gy, counts[c->rank]) < 0)
        return -1;
    if (cg_tp_all_gather(c->tp, c->gy->data, c->gx->data, counts, c->gx->dtype) < 0)
        return cg_rules_tp_fail(c);
    return scale_by_local_factor(c, s, NULL);
}

/* dx_root = Σ_r g_r; dx_i = 0 elsewhere. */
static int broadcast_backward(cg_rule_call *c, cg_graph *s)
{
    size_t n = (size_t)c->gy->numel;
    bool at_root = c->rank == c->coll->root;
    if (at_root && expect_numel(c, "gx", c->gx, n) < 0)
        return -1;
    void *recv = at_root ? c->gx->data : ignored_buffer(c, s, n);
    if (!recv)
        return -1;
    if (cg_tp_reduce(c->tp, c->gy->data, recv, n, c->gx->dtype, CGT_SUM, c->coll->root) < 0)
        return cg_rules_tp_fail(c);
    return 0;
}

/* dx_i = g_root · factor_i; non-root outputs carry no gradient. */
static int reduce_backward(cg_rule_call *c, cg_graph *s)
{
    size_t n = (size_t)c->x->numel;
    if (c->rank == c->coll->root) {
        if (expect_numel(c, "gy", c->gy, n) < 0 ||
            cg_local_copy(c, c->gx->data, c->gy->data, n * cg_dtype_size(c->gx->dtype)) < 0)
            return -1;
    }
    if (cg_tp_broadcast(c->tp, c->gx->data, n, c->gx->dtype, c->coll->root) < 0)
        return cg_rules_tp_fail(c);
    return scale_by_local_factor(c, s, NULL);
}

/* dx_i = g_root[slice i] */
static int gather_backward(cg_rule_call *c, cg_graph *s)
{
    (void)s;
    size_t total = sum_counts(c->in_counts, c->world);
    if (expect_numel(c, "gx", c->gx, c->in_counts[c->rank]) < 0)
        return -1;
    if (c->rank == c->coll->root && expect_numel(c, "gy", c->gy, total) < 0)
        return -1;
    if (cg_tp_scatter(c->tp, c->gy->data, c->gx->data, c->in_counts, c->gx->dtype,
                      c->coll->root) < 0)
        return cg_rules_tp_fail(c);
    return 0;
}

/* The blocks scatter cut from x_root's rows. A non-root knows x_root only by
 * its count, but its own block y keeps x_root's row shape. */
static void scatter_block_counts(const cg_rule_call *c, size_t *counts)
{
    if (c->rank == c->coll->root) {
        row_block_counts(rows_of(c->x), row_size(c->x), c->world, counts);
        return;
    }
    int64_t rowsize = row_size(c->y);
    int64_t rows = rowsize > 0 ? (int64_t)c->in_counts[c->coll->root] / rowsize : 0;
    row_block_counts(rows, rowsize, c->world, counts);
}

/* dx_root = cat_r g_r; dx_i = 0 elsewhere. */
static int scatter_backward(cg_rule_call *c, cg_graph *s)
{
    size_t *counts = new_counts(c, s);
    if (!counts)
        return -1;
    scatter_block_counts(c, counts);
    size_t total = sum_counts(counts, c->world);
    bool at_root = c->rank == c->coll->root;
    if (expect_numel(c, "gy", c->gy, counts[c->rank]) < 0 ||
        (at_root && expect_numel(c, "gx", c->gx, total) < 0))
        return -1;
    void *recv = at_root ? c->gx->data : ignored_buffer(c, s, total);
    if (!recv)
        return -1;
    if (cg_tp_gather(c->tp, c->gy->data, recv, counts, c->gx->dtype, c->coll->root) < 0)
        return cg_rules_tp_fail(c);
    return 0;
}

/* dx_i[block j] = g_j[part from i]: the forward's all_to_all with send and
 * receive counts swapped. Rows of every x_j have x_i's row shape (the
 * output concatenates them), so x_j's rows follow from its count. */
static int all_to_all_backward(cg_rule_call *c, cg_graph *s)
{
    size_t *fwd_send = new_counts(c, s), *fwd_recv = new_counts(c, s);
    if (!fwd_send || !fwd_recv)
        return -1;
    int64_t rowsize = row_size(c->x);
    row_block_counts(rows_of(c->x), rowsize, c->world, fwd_send);
    for (int j = 0; j < c->world; j++) {
        int64_t rows_j = rowsize > 0 ? (int64_t)c->in_counts[j] / rowsize : 0;
        int64_t block = cg_chunk_lo(rows_j, c->world, c->rank + 1) -
                        cg_chunk_lo(rows_j, c->world, c->rank);
        fwd_recv[j] = (size_t)(block * rowsize);
    }
    if (expect_numel(c, "gy", c->gy, sum_counts(fwd_recv, c->world)) < 0 ||
        expect_numel(c, "gx", c->gx, sum_counts(fwd_send, c->world)) < 0)
        return -1;
    if (cg_tp_all_to_all(c->tp, c->gy->data, fwd_recv, c->gx->data, fwd_send, c->gx->dtype) < 0)
        return cg_rules_tp_fail(c);
    return 0;
}

/* ---- dispatch --------------------------------------------------------------- */

static const backward_fn reference_backward_of[CG_C_COUNT] = {
    [CG_C_ALL_REDUCE] = all_reduce_backward,   [CG_C_ALL_GATHER] = all_gather_backward,
    [CG_C_REDUCE_SCATTER] = reduce_scatter_backward, [CG_C_BROADCAST] = broadcast_backward,
    [CG_C_REDUCE] = reduce_backward,           [CG_C_GATHER] = gather_backward,
    [CG_C_SCATTER] = scatter_backward,         [CG_C_ALL_TO_ALL] = all_to_all_backward,
};

static int check_call(cg_rule_call *c)
{
    cg_coll_kind k = c->coll->kind;
    if ((unsigned)k >= CG_C_COUNT || !reference_backward_of[k])
        return cg_rules_fail(c, "no backward formula: %s is not a collective (the worker "
                                "wires send and recv itself)", cg_coll_name(k));
    if (c->x->dtype != c->gx->dtype || c->gy->dtype != c->gx->dtype)
        return cg_rules_fail(c, "dtypes differ: x %s, gy %s, gx %s", cg_dtype_name(c->x->dtype),
                             cg_dtype_name(c->gy->dtype), cg_dtype_name(c->gx->dtype));
    if (c->gx->numel != c->x->numel)
        return cg_rules_fail(c, "gx has %lld elements but x has %lld", (long long)c->gx->numel,
                             (long long)c->x->numel);
    if (cg_coll_has_root(k) && (c->coll->root < 0 || c->coll->root >= c->world))
        return cg_rules_fail(c, "root %d is not a rank of a world of %d", c->coll->root,
                             c->world);
    return 0;
}

int cg_reference_backward(cg_rule_call *call)
{
    if (check_call(call) < 0)
        return -1;
    cg_graph *scratch = cg_local_scratch(call);
    if (!scratch)
        return -1;
    int rc = reference_backward_of[call->coll->kind](call, scratch);
    cg_graph_free(scratch);
    return rc;
}

/* What each backward computes (DESIGN section 3), in the words the
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
    .see = "DESIGN.md section 3; pytorch/pytorch#58005",
    .wiring = cg_wiring_all_collective,
    .backward = cg_reference_backward,
    .docs = reference_docs,
};
