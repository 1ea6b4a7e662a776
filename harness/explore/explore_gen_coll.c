/* explore_gen_coll.c — the generator's collective statements
 * (explore_gen_state.h): a collective of the table on the world, a subset
 * group or a mesh's groups, with a reduction op whose gradient is defined
 * for the values drawn (draw_op), rooted at a member, split evenly or not,
 * and a backward on the root where only the root's output means anything.
 *
 * Everything about a kind comes from the collective table (collectives.h)
 * and the language's syntax (coll_words.h): which arguments it takes and
 * where (op, root, send_splits, recv_splits), its output's shape on a member
 * (the shape rule) and on a non-member (its input, design.md section 13), whether only
 * the root's output means anything, whether it is half of a point-to-point
 * pair. A new kind is drawn as soon as its table row and words exist. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll_words.h"
#include "collectives.h"
#include "explore_gen_state.h"

/* What the generator reads of kind k's table row and syntax. */
typedef struct kind_info {
    cg_coll_kind k;
    const char *name;
    cg_shape_rule shape;  /* a member's output: SAME, CAT (xW rows), BLOCK (/W), BLOCKS (rows) */
    bool takes_op;        /* takes op= (its words) */
    bool reduces;         /* its value is a reduction over the members: takes op=, or sums */
    bool rooted;          /* takes root= */
    bool root_only;       /* only the root's output means anything: a backward on the root reads it */
    bool p2p;             /* half of a send/recv pair */
    cg_coll_kind pair;    /* p2p: the other half */
    int op_at, root_at;   /* positional indices of op and root, or -1 */
    bool uneven;          /* takes send_splits= */
    bool uneven_matrix;   /* and recv_splits=: rows per (sender, receiver), else rows per receiver */
} kind_info;

static kind_info info_of(cg_coll_kind k)
{
    const cg_collective *d = cg_collective_of(k);
    return (kind_info){k,
                       cg_coll_name(k),
                       d->shape,
                       cg_coll_has_op(k),
                       cg_coll_has_op(k) || d->sums,
                       cg_coll_has_root(k),
                       d->root_only_output,
                       d->p2p,
                       d->transpose,
                       cg_coll_keyword_index(k, "op"),
                       cg_coll_keyword_index(k, "root"),
                       cg_coll_keyword_index(k, "send_splits") >= 0,
                       cg_coll_keyword_index(k, "recv_splits") >= 0};
}

/* The kinds the generator draws, in table order: every collective, and a
 * point-to-point pair once (as its first half, which the ring emits with
 * its other half). Returns how many. */
static int drawn_kinds(cg_coll_kind *out)
{
    int n = 0;
    for (int k = 0; k < CG_C_COUNT; k++) {
        const cg_collective *d = cg_collective_of((cg_coll_kind)k);
        if (!d->p2p || (int)d->transpose > k)
            out[n++] = (cg_coll_kind)k;
    }
    return n;
}

/* The table's first kind that reduces into every member's own shape, read
 * by every member (all_reduce): where a drawn kind cannot go, this one can. */
static cg_coll_kind plain_reduction(void)
{
    for (int k = 0; k < CG_C_COUNT; k++) {
        kind_info i = info_of((cg_coll_kind)k);
        if (i.takes_op && i.shape == CG_SHAPE_SAME && !i.root_only && !i.rooted)
            return (cg_coll_kind)k;
    }
    return (cg_coll_kind)0;
}

/* The largest |value| of kind i's result with op over `size` ranks: a
 * reduction's (SUM adds, PROD multiplies; a kind that sums without op=
 * adds), else its input's. */
static double reduced_mag(const var *a, const kind_info *i, int op, int size)
{
    if (!i->reduces)
        return a->mag;
    if (!i->takes_op)
        op = CG_RED_SUM;
    return op == CG_RED_PROD ? pow(a->mag, size) : op == CG_RED_SUM ? a->mag * size : a->mag;
}

/* A reduction op for kind i on a over `size` ranks, drawn whether i reduces
 * or not (the draws stay the same): MAX/MIN become SUM where values may be
 * equal (replicated, a group's, or rounded to a half type: a tie), PROD
 * becomes SUM where it would pass the bound; -1 where even the op's result
 * passes f16's bound (draw again). */
static int draw_op(gen *g, const var *a, const kind_info *i, int size)
{
    int op = below(g, CG_RED_COUNT);
    if ((op == CG_RED_MAX || op == CG_RED_MIN) && (a->replicated || a->partly_equal || g->half))
        op = CG_RED_SUM;
    if (op == CG_RED_PROD && pow(a->mag, size) > g->max_mag)
        op = CG_RED_SUM;
    return g->f16 && reduced_mag(a, i, op, size) > g->max_mag ? -1 : op;
}

/* The call `y = NAME(a[, positional...][, group=G])`, op and root at the
 * places the syntax gives them. */
static void emit_call(gen *g, const var *y, const kind_info *i, const var *a, int op, const char *root,
                      const char *group)
{
    const char *pos[4] = {NULL, NULL, NULL, NULL};
    if (i->takes_op && i->op_at > 0 && i->op_at < 4)
        pos[i->op_at] = cg_redop_name((cg_redop)op);
    if (i->rooted && i->root_at > 0 && i->root_at < 4)
        pos[i->root_at] = root;
    cgg_emit(g, "%s = %s(%s", y->name, i->name, a->name);
    for (int k = 1; k < 4 && pos[k]; k++)
        cgg_emit(g, ", %s", pos[k]);
    if (group)
        cgg_emit(g, ", group=%s", group);
    cgg_emit(g, ")\n");
}

/* The root of a rooted collective on group p, as call text: a member of a
 * subset group; on a mesh every group has its own root, so a rank
 * expression (a row's first rank, a column's first). roots[] gets the
 * global ranks that are some group's root; returns how many. */
static int group_root(gen *g, const pgroup *p, char *text, size_t n, int roots[8])
{
    int half = g->world / 2, nroots = 0;
    if (p->mesh && strcmp(p->name, "tp") == 0) {
        snprintf(text, n, "rank - rank %% %d", half);
        roots[nroots++] = 0;
        roots[nroots++] = half;
    } else if (p->mesh) {
        snprintf(text, n, "rank %% %d", half);
        for (int r = 0; r < half; r++)
            roots[nroots++] = r;
    } else {
        roots[nroots++] = p->members[below(g, p->size)];
        snprintf(text, n, "%d", roots[0]);
    }
    return nroots;
}

/* `on R1, R2 { backward(sum(y * y)) }`: the roots alone read a rooted result. */
static void backward_on(gen *g, const var *y, const int *roots, int nroots)
{
    cgg_emit(g, "on ");
    for (int k = 0; k < nroots; k++)
        cgg_emit(g, "%s%d", k ? ", " : "", roots[k]);
    cgg_emit(g, " {\n  backward(sum(%s * %s))\n}\n", y->name, y->name);
}

/* Whether a's rows fit kind i over `size` ranks: a split divides them, a
 * concatenation stays within MAX_ELEMS. */
static bool fits(const var *a, const kind_info *i, int size)
{
    if ((i->shape == CG_SHAPE_BLOCK || i->shape == CG_SHAPE_BLOCKS) && a->rows % size != 0)
        return false;
    return i->shape != CG_SHAPE_CAT || numel(a) * size <= MAX_ELEMS;
}

/* A member's output rows of kind i over `size` ranks. */
static int64_t member_rows(const var *a, const kind_info *i, int size)
{
    return i->shape == CG_SHAPE_CAT ? a->rows * size : i->shape == CG_SHAPE_BLOCK ? a->rows / size : a->rows;
}

/* A collective on one of the program's groups: every kind but a
 * point-to-point pair (which takes no group). A non-member's output is its
 * input, so where a member's shape differs the result is ragged: an unrooted
 * such kind (all_gather, reduce_scatter) goes to a mesh's groups (every rank
 * a member of a group of one size) or becomes the plain reduction; a rooted
 * one's result (scatter) is read by a loss only. A rooted result that means
 * something on the root only (gather, reduce): the roots alone read it. The
 * output is equal within each group at most, never across the world unless
 * the group is the world. */
static bool group_collective(gen *g, var *a, kind_info i)
{
    const pgroup *p = &g->grp[below(g, g->ngrp)];
    bool reshapes = i.shape == CG_SHAPE_CAT || i.shape == CG_SHAPE_BLOCK;
    if (i.p2p || (!p->mesh && reshapes && !i.rooted))
        i = info_of(plain_reduction());
    if (!fits(a, &i, p->size))
        return false;
    int op = draw_op(g, a, &i, p->size);
    if (op < 0)
        return false;
    var *y = cgg_fresh(g, a);
    y->replicated = g->world == 1;
    y->partly_equal = true;
    char root[48];
    int roots[8], nroots = i.rooted ? group_root(g, p, root, sizeof root, roots) : 0;
    emit_call(g, y, &i, a, op, root, p->name);
    if (i.root_only) {
        backward_on(g, y, roots, nroots);
        y->root_only = true;
    } else {
        y->rows = member_rows(a, &i, p->size);
        if (reshapes && !p->mesh) { /* a non-member keeps its a->rows */
            y->ragged = true;
            y->all_rows = 0; /* no all_gather of it: its rows over the ranks vary by membership */
        }
        if (i.reduces) /* a non-member keeps its input */
            y->mag = fmax(a->mag, reduced_mag(a, &i, op, p->size));
    }
    g->ncoll++;
    return true;
}

/* Rows per rank of an uneven split of a's rows over the world, as a
 * rank-indexed list: rows per receiver ([m[rank][*]], send_splits=) or, for
 * an exchange, m[j][r] rows from rank j to rank r, each row of m summing to
 * `rows` (every rank's input has them): send_splits [[m[0][*]], ...][rank],
 * recv_splits the columns. */
static void uneven_call(gen *g, const kind_info *i, const var *a, const var *y, int op)
{
    int64_t m[8][8];
    int senders = i->uneven_matrix ? g->world : 1;
    for (int j = 0; j < senders; j++) {
        int64_t left = a->rows;
        for (int r = 0; r < g->world; r++) {
            m[j][r] = r == g->world - 1 ? left : below(g, (int)left + 1);
            left -= m[j][r];
        }
    }
    cgg_emit(g, "%s = %s(%s", y->name, i->name, a->name);
    if (i->takes_op)
        cgg_emit(g, ", %s", cg_redop_name((cg_redop)op));
    if (!i->uneven_matrix) {
        cgg_emit(g, ", send_splits=[");
        for (int r = 0; r < g->world; r++)
            cgg_emit(g, "%s%lld", r ? ", " : "", (long long)m[0][r]);
        cgg_emit(g, "])\n");
        return;
    }
    cgg_emit(g, ", send_splits=[");
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < g->world; r++) {
            cgg_emit(g, "%s[", r ? ", " : "");
            for (int j = 0; j < g->world; j++)
                cgg_emit(g, "%s%lld", j ? ", " : "", (long long)(pass ? m[j][r] : m[r][j]));
            cgg_emit(g, "]");
        }
        cgg_emit(g, pass ? "][rank])\n" : "][rank], recv_splits=[");
    }
}

/* A ragged tensor's rows, concatenated whole by kind i (all_gather): every
 * rank's result alike. false when there is none to take. */
static bool gather_ragged(gen *g, const kind_info *i)
{
    for (int k = 0; k < g->nv; k++)
        if (g->v[k].ragged && g->v[k].all_rows > 0 && chance(g, 50)) {
            var *y = cgg_fresh(g, &g->v[k]);
            cgg_emit(g, "%s = %s(%s)\n", y->name, i->name, g->v[k].name);
            y->rows = g->v[k].all_rows;
            y->ragged = false, y->all_rows = 0, y->replicated = true;
            g->ncoll++;
            return true;
        }
    return false;
}

/* A point-to-point pair as a ring: each rank sends `shift` ranks on and
 * receives from as many back. */
static bool ring(gen *g, const var *a, const kind_info *i)
{
    if (g->world == 1) /* a ring needs a peer */
        return false;
    var *y = cgg_fresh(g, a);
    int shift = 1 + below(g, g->world - 1);
    cgg_emit(g, "%s(%s, (rank + %d) %% world)\n%s = %s((rank + world - %d) %% world)\n", i->name, a->name, shift,
             y->name, cg_coll_name(i->pair), shift);
    y->replicated = false;
    g->ncoll++;
    return true;
}

/* A collective of the table on a tensor that fits it. */
bool cgg_collective(gen *g)
{
    cg_coll_kind kinds[CG_C_COUNT];
    int nkinds = drawn_kinds(kinds);
    var *a = cgg_pick(g);
    kind_info i = info_of(kinds[below(g, nkinds)]);
    if (g->ngrp > 0 && chance(g, 40))
        return group_collective(g, a, i);
    if (i.shape == CG_SHAPE_CAT && !i.root_only && gather_ragged(g, &i))
        return true;
    if (i.p2p)
        return ring(g, a, &i);
    if (!fits(a, &i, g->world))
        return false;
    int op = draw_op(g, a, &i, g->world);
    if (op < 0)
        return false;
    var *y = cgg_fresh(g, a);
    if (i.root_only) { /* the root's result, read by a backward on the root only */
        int root = below(g, g->world);
        char text[16];
        snprintf(text, sizeof text, "%d", root);
        emit_call(g, y, &i, a, op, text, NULL);
        backward_on(g, y, &root, 1);
        y->root_only = true;
        g->ncoll++;
        return true;
    }
    bool uneven = i.uneven && g->world > 1 && !(i.takes_op && op == CG_RED_PROD) && chance(g, 25);
    if (uneven) { /* a rank's output rows differ */
        uneven_call(g, &i, a, y, op);
        y->ragged = true;
        y->all_rows = i.shape == CG_SHAPE_BLOCK ? a->rows : a->rows * g->world;
    } else {
        char text[16] = "";
        if (i.rooted)
            snprintf(text, sizeof text, "%d", below(g, g->world));
        emit_call(g, y, &i, a, op, text, NULL);
    }
    y->rows = member_rows(a, &i, g->world);
    /* every rank holds the same result where each gets the whole of it */
    y->replicated = (i.shape == CG_SHAPE_SAME || i.shape == CG_SHAPE_CAT) || g->world == 1;
    if (i.reduces)
        y->mag = reduced_mag(a, &i, op, g->world);
    g->ncoll++;
    return true;
}
