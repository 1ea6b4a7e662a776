/* explore_gen_coll.c — the generator's collective statements
 * (explore_gen_state.h): a collective of the table on the world, a subset
 * group or a mesh's groups, with a reduction op whose gradient is defined
 * for the values drawn (draw_op), rooted at a member, split evenly or not,
 * and a backward on the root where only the root's output means anything. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll_words.h"
#include "explore_gen_state.h"

/* The largest |value| of kind k's result with op over `size` ranks: a
 * reduction's (SUM adds, PROD multiplies), else its input's. */
static double reduced_mag(const var *a, cg_coll_kind k, int op, int size)
{
    bool reduces = k == CG_C_ALL_REDUCE || k == CG_C_REDUCE_SCATTER || k == CG_C_REDUCE;
    if (!reduces)
        return a->mag;
    return op == 2 ? pow(a->mag, size) : op == 0 ? a->mag * size : a->mag;
}

/* A reduction op for kind k on a over `size` ranks (0 sum, 1 avg, 2 prod,
 * 3 max, 4 min), drawn whether k reduces or not (the draws stay the same):
 * MAX/MIN become SUM where values may be equal (replicated, a group's, or
 * rounded to a half type: a tie), PROD becomes SUM where it would pass the
 * bound; -1 where even the op's result passes f16's bound (draw again). */
static int draw_op(gen *g, const var *a, cg_coll_kind k, int size)
{
    int op = below(g, 5);
    if ((op == 3 || op == 4) && (a->replicated || a->partly_equal || g->half))
        op = 0;
    if (op == 2 && pow(a->mag, size) > g->max_mag)
        op = 0;
    return g->f16 && reduced_mag(a, k, op, size) > g->max_mag ? -1 : op;
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

/* A collective on one of the program's groups: every kind but send (which
 * takes no group). A non-member's output is its input, so where a member's
 * shape differs (all_gather, reduce_scatter, scatter on a subset group) the
 * result is ragged: all_gather and reduce_scatter go to a mesh's groups
 * (every rank a member of a group of one size) instead, scatter's result is
 * read by a loss only. gather and reduce: their roots alone read them. The
 * output is equal within each group at most, never across the world unless
 * the group is the world. */
static bool group_collective(gen *g, var *a, cg_coll_kind k)
{
    static const char *const ops[] = {"sum", "avg", "prod", "max", "min"};
    const pgroup *p = &g->grp[below(g, g->ngrp)];
    if (k == CG_C_SEND || (!p->mesh && (k == CG_C_ALL_GATHER || k == CG_C_REDUCE_SCATTER)))
        k = CG_C_ALL_REDUCE;
    bool splits = k == CG_C_REDUCE_SCATTER || k == CG_C_SCATTER || k == CG_C_ALL_TO_ALL;
    if ((splits && a->rows % p->size != 0) ||
        ((k == CG_C_ALL_GATHER || k == CG_C_GATHER) && numel(a) * p->size > MAX_ELEMS))
        return false;
    int op = draw_op(g, a, k, p->size);
    if (op < 0)
        return false;
    var *y = cgg_fresh(g, a);
    const char *name = cg_coll_name(k);
    y->replicated = g->world == 1;
    y->partly_equal = true;
    double reduced = op == 2 ? pow(a->mag, p->size) : op == 0 ? a->mag * p->size : a->mag;
    char root[48];
    int roots[8], nroots = 0;
    switch (k) {
    case CG_C_BROADCAST:
        group_root(g, p, root, sizeof root, roots);
        cgg_emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, root, p->name);
        break;
    case CG_C_ALL_GATHER:
        cgg_emit(g, "%s = %s(%s, group=%s)\n", y->name, name, a->name, p->name);
        y->rows = a->rows * p->size;
        break;
    case CG_C_REDUCE_SCATTER:
        cgg_emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, ops[op], p->name);
        y->rows = a->rows / p->size;
        y->mag = reduced;
        break;
    case CG_C_ALL_TO_ALL: /* the shape stays: member or not */
        cgg_emit(g, "%s = %s(%s, group=%s)\n", y->name, name, a->name, p->name);
        break;
    case CG_C_SCATTER:
        group_root(g, p, root, sizeof root, roots);
        cgg_emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, root, p->name);
        y->rows = a->rows / p->size;
        y->ragged = !p->mesh; /* a non-member keeps its a->rows */
        y->all_rows = 0;      /* no all_gather of it: its rows over the ranks vary by membership */
        break;
    case CG_C_REDUCE:
    case CG_C_GATHER:
        nroots = group_root(g, p, root, sizeof root, roots);
        if (k == CG_C_REDUCE)
            cgg_emit(g, "%s = %s(%s, %s, %s, group=%s)\n", y->name, name, a->name, root, ops[op], p->name);
        else
            cgg_emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, root, p->name);
        backward_on(g, y, roots, nroots);
        y->root_only = true;
        break;
    default:
        cgg_emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, ops[op], p->name);
        y->mag = fmax(a->mag, reduced); /* a non-member keeps its input */
        break;
    }
    g->ncoll++;
    return true;
}

/* Rows per rank of an uneven all_to_all: m[j][r] rows go from rank j to
 * rank r, each row of m summing to `rows` (every rank's input has them), as
 * a rank-indexed list: send_splits [[m[0][*]], ...][rank], recv_splits the
 * columns. */
static void uneven_all_to_all(gen *g, const var *a, const var *y)
{
    int64_t m[8][8];
    for (int j = 0; j < g->world; j++) {
        int64_t left = a->rows;
        for (int r = 0; r < g->world; r++) {
            m[j][r] = r == g->world - 1 ? left : below(g, (int)left + 1);
            left -= m[j][r];
        }
    }
    cgg_emit(g, "%s = all_to_all(%s, send_splits=[", y->name, a->name);
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

/* A collective of the table on a tensor that fits it. */
bool cgg_collective(gen *g)
{
    static const cg_coll_kind kinds[] = {CG_C_ALL_REDUCE, CG_C_ALL_GATHER, CG_C_REDUCE_SCATTER, CG_C_BROADCAST,
                                         CG_C_ALL_TO_ALL, CG_C_REDUCE,     CG_C_GATHER,         CG_C_SCATTER,
                                         CG_C_SEND};
    static const char *const ops[] = {"sum", "avg", "prod", "max", "min"};
    var *a = cgg_pick(g);
    cg_coll_kind k = kinds[below(g, (int)(sizeof kinds / sizeof kinds[0]))];
    if (g->ngrp > 0 && chance(g, 40))
        return group_collective(g, a, k);
    if (k == CG_C_ALL_GATHER) /* a ragged tensor's rows, gathered whole: every rank's alike */
        for (int i = 0; i < g->nv; i++)
            if (g->v[i].ragged && g->v[i].all_rows > 0 && chance(g, 50)) {
                var *y = cgg_fresh(g, &g->v[i]);
                cgg_emit(g, "%s = all_gather(%s)\n", y->name, g->v[i].name);
                y->rows = g->v[i].all_rows;
                y->ragged = false, y->all_rows = 0, y->replicated = true;
                g->ncoll++;
                return true;
            }
    if (k == CG_C_SEND && g->world == 1) /* a ring needs a peer */
        return false;
    bool splits = k == CG_C_REDUCE_SCATTER || k == CG_C_ALL_TO_ALL || k == CG_C_SCATTER;
    if ((splits && a->rows % g->world != 0) || (k == CG_C_ALL_GATHER && numel(a) * g->world > MAX_ELEMS))
        return false;
    int op = draw_op(g, a, k, g->world);
    if (op < 0)
        return false;
    var *y = cgg_fresh(g, a);
    const char *name = cg_coll_name(k);
    switch (k) {
    case CG_C_ALL_REDUCE:
        cgg_emit(g, "%s = %s(%s, %s)\n", y->name, name, a->name, ops[op]);
        y->replicated = true;
        y->mag = op == 2 ? pow(a->mag, g->world) : op == 0 ? a->mag * g->world : a->mag;
        break;
    case CG_C_REDUCE_SCATTER:
        if (g->world > 1 && op != 2 && chance(g, 25)) { /* uneven: rank r gets splits[r] rows */
            int64_t left = a->rows;
            cgg_emit(g, "%s = %s(%s, %s, send_splits=[", y->name, name, a->name, ops[op]);
            for (int r = 0; r < g->world; r++) {
                int64_t rows = r == g->world - 1 ? left : below(g, (int)left + 1);
                cgg_emit(g, "%s%lld", r ? ", " : "", (long long)rows);
                left -= rows;
            }
            cgg_emit(g, "])\n");
            y->ragged = true;
            y->all_rows = a->rows;
        } else {
            cgg_emit(g, "%s = %s(%s, %s)\n", y->name, name, a->name, ops[op]);
        }
        y->rows = a->rows / g->world;
        y->replicated = g->world == 1;
        y->mag = op == 2 ? pow(a->mag, g->world) : op == 0 ? a->mag * g->world : a->mag;
        break;
    case CG_C_ALL_GATHER:
        cgg_emit(g, "%s = %s(%s)\n", y->name, name, a->name);
        y->rows = a->rows * g->world;
        y->replicated = true;
        break;
    case CG_C_BROADCAST:
        cgg_emit(g, "%s = %s(%s, %d)\n", y->name, name, a->name, below(g, g->world));
        y->replicated = true;
        break;
    case CG_C_REDUCE: /* the root's result, read by a backward on the root only */
    case CG_C_GATHER: {
        int root = below(g, g->world);
        if (k == CG_C_REDUCE)
            cgg_emit(g, "%s = %s(%s, %d, %s)\n", y->name, name, a->name, root, ops[op]);
        else
            cgg_emit(g, "%s = %s(%s, %d)\n", y->name, name, a->name, root);
        cgg_emit(g, "on %d {\n  backward(sum(%s * %s))\n}\n", root, y->name, y->name);
        y->root_only = true;
        break;
    }
    case CG_C_SCATTER: /* rank r gets the root's block r */
        cgg_emit(g, "%s = %s(%s, %d)\n", y->name, name, a->name, below(g, g->world));
        y->rows = a->rows / g->world;
        y->replicated = g->world == 1;
        break;
    case CG_C_SEND: { /* a ring: each rank sends `shift` ranks on and receives from as many back */
        int shift = 1 + below(g, g->world - 1);
        cgg_emit(g, "send(%s, (rank + %d) %% world)\n%s = recv((rank + world - %d) %% world)\n", a->name, shift,
             y->name, shift);
        y->replicated = false;
        break;
    }
    default: /* all_to_all: rank r gets every rank's block r */
        if (g->world > 1 && chance(g, 25)) { /* uneven: rank r's output rows differ */
            uneven_all_to_all(g, a, y);
            y->ragged = true;
            y->all_rows = a->rows * g->world;
        } else {
            cgg_emit(g, "%s = %s(%s)\n", y->name, name, a->name);
        }
        y->replicated = g->world == 1;
        break;
    }
    g->ncoll++;
    return true;
}
