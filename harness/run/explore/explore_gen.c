/* explore_gen.c — random programs, valid by construction (explore_gen.h).
 *
 * The generator keeps, for every tensor it has named, its shape, whether
 * every rank holds the same values (replicated: an all_reduce's result, a
 * broadcast's) and a bound on its magnitude, and draws only statements whose
 * every argument fits: split collectives get rows that divide by the world,
 * MAX/MIN get values that differ between ranks, exp and pow get inputs whose
 * result stays far from overflow, log and sqrt get v * v + 1. Which local
 * ops exist, what they take and where they are smooth is the op table's. */
#include "explore_gen.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_words.h"
#include "op_table.h"

enum { MAX_VARS = 24, MAX_MAG = 1000000, MAX_ELEMS = 4096 };
/* f16's largest finite value is 65504: its programs keep every value below
 * F16_MAX_MAG, so that the gradients (a loss weighs its tensor by up to
 * 2 W(W+1)/2 = 72 at W = 8) stay finite too */
enum { F16_MAX_MAG = 50 };

typedef struct var {
    char name[8];
    int ndim;          /* 1 or 2 */
    int64_t rows, cols; /* [rows] or [rows, cols] */
    bool replicated;   /* the same values on every rank */
    bool root_only;    /* a reduce's or gather's output: meaningful on its root only, so
                        * only a backward on that root reads it */
    bool ragged;       /* its shape differs between ranks (a reduce_scatter with uneven
                        * send_splits, an uneven all_to_all, a scatter on a subset group):
                        * read by the losses and by all_gather only */
    int64_t all_rows;  /* a ragged var's rows over all ranks (what all_gather makes); 0: none */
    bool partly_equal; /* some ranks (a group's members) may hold equal values: no MAX/MIN
                        * over it, whose tie would have no one gradient */
    double mag;        /* |value| stays below this */
} var;

/* A process group the program made: `g0 = group([1, 3])` (members: a
 * subset, non-members get their input back), or a mesh's `tp` / `dp`
 * (every rank a member of one group of `size`). */
typedef struct pgroup {
    const char *name;
    int size;
    bool mesh;
    int members[8]; /* a subset group's, ascending */
} pgroup;

typedef struct gen {
    uint64_t s; /* splitmix64 state */
    int world;
    pgroup grp[3];
    int ngrp;
    char *text;
    size_t len, cap;
    bool oom;
    bool half;      /* bf16 or f16: no MAX/MIN (values that differ round to a tie) */
    bool f16;       /* every value bounded by max_mag, sums and exp included */
    double max_mag; /* |value| bound of the draws: MAX_MAG, F16_MAX_MAG for f16 */
    var v[MAX_VARS];
    int nv, ncoll;
} gen;

/* ---- deterministic draws: splitmix64, the same on every machine ----------- */

static uint64_t next(gen *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int below(gen *g, int n) { return n > 0 ? (int)(next(g) % (uint64_t)n) : 0; }
static bool chance(gen *g, int percent) { return below(g, 100) < percent; }

/* ---- text ------------------------------------------------------------------ */

__attribute__((format(printf, 2, 3))) static void emit(gen *g, const char *fmt, ...)
{
    va_list ap;
    for (int pass = 0; pass < 2 && !g->oom; pass++) {
        va_start(ap, fmt);
        int n = vsnprintf(g->text + g->len, g->cap - g->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            g->oom = true;
        } else if ((size_t)n < g->cap - g->len) {
            g->len += (size_t)n;
            return;
        } else {
            size_t cap = (g->cap + (size_t)n + 1) * 2;
            char *t = realloc(g->text, cap);
            if (!t)
                g->oom = true;
            else
                g->text = t, g->cap = cap;
        }
    }
}

/* ---- tensors ---------------------------------------------------------------- */

static var *fresh(gen *g, const var *like)
{
    var *t = &g->v[g->nv];
    *t = *like;
    snprintf(t->name, sizeof t->name, "v%d", g->nv);
    g->nv++;
    return t;
}

static int64_t numel(const var *t) { return t->ndim == 1 ? t->rows : t->rows * t->cols; }

static bool same_shape(const var *a, const var *b)
{
    return a->ndim == b->ndim && a->rows == b->rows && (a->ndim == 1 || a->cols == b->cols);
}

static void shape_text(const var *t, char *out, size_t n)
{
    if (t->ndim == 1)
        snprintf(out, n, "%lld", (long long)t->rows);
    else
        snprintf(out, n, "%lld, %lld", (long long)t->rows, (long long)t->cols);
}

/* A random named tensor any statement may read; among the last few more
 * often (deeper programs). The params always qualify. */
static var *pick(gen *g)
{
    int n = g->nv, k = chance(g, 60) && n > 2 ? n - 1 - below(g, 2) : below(g, n);
    while (g->v[k].root_only || g->v[k].ragged)
        k = k > 0 ? k - 1 : n - 1;
    return &g->v[k];
}

/* Another tensor of a's shape, or NULL. */
static var *pick_like(gen *g, const var *a)
{
    int start = below(g, g->nv);
    for (int k = 0; k < g->nv; k++) {
        var *b = &g->v[(start + k) % g->nv];
        if (same_shape(a, b) && !b->root_only && !b->ragged)
            return b;
    }
    return NULL;
}

/* ---- statements --------------------------------------------------------------- */

/* x_k = param(randn(shape)): per rank, rows a multiple of the world. */
static void param(gen *g)
{
    var t = {.ndim = 1 + below(g, 2), .rows = (int64_t)g->world * (1 + below(g, 2)), .cols = 1 + below(g, 3),
             .replicated = g->world == 1, .mag = 6};
    var *x = fresh(g, &t);
    snprintf(x->name, sizeof x->name, "x%d", g->nv - 1);
    char shape[48];
    shape_text(x, shape, sizeof shape);
    emit(g, "%s = param(randn(%s))\n", x->name, shape);
}

/* Maybe a process group or a mesh, made before anything else (every rank
 * makes every group): a subset of 2..W-1 ranks at W >= 3, or at W = 4, 6, 8
 * a [2, W/2] mesh (tp: a row of W/2 ranks, dp: a column of 2). */
static void groups(gen *g)
{
    if (g->world >= 4 && g->world % 2 == 0 && chance(g, 25)) {
        g->grp[g->ngrp++] = (pgroup){"tp", g->world / 2, true, {0}};
        g->grp[g->ngrp++] = (pgroup){"dp", 2, true, {0}};
        emit(g, "tp, dp = mesh([2, %d])\n", g->world / 2);
    }
    if (g->world >= 3 && chance(g, 30)) {
        pgroup *p = &g->grp[g->ngrp++];
        *p = (pgroup){"g0", 0, false, {0}};
        int size = 2 + below(g, g->world - 2); /* 2..W-1 */
        for (int r = 0; r < g->world; r++) /* size of the W ranks, in order (selection sampling) */
            if (below(g, g->world - r) < size - p->size)
                p->members[p->size++] = r;
        emit(g, "g0 = group([");
        for (int k = 0; k < p->size; k++)
            emit(g, "%s%d", k ? ", " : "", p->members[k]);
        emit(g, "])\n");
    }
}

/* A unary op of the table, smooth, same shape: its domain by construction. */
static bool unary(gen *g)
{
    var *a = pick(g);
    int ids[CG_FN_COUNT], n = 0;
    for (int id = 0; id < CG_FN_COUNT; id++) {
        const cg_op_info *op = cg_op_info_of((cg_fn_id)id);
        if (op->cls == CG_OPC_UNARY && op->shape == CG_OSH_SAME && op->diff == CG_DIFF_SMOOTH &&
            (id != CG_FN_EXP || (a->mag <= 8 && (!g->f16 || exp(a->mag) <= g->max_mag))))
            ids[n++] = id;
    }
    if (n == 0)
        return false;
    const cg_op_info *op = cg_op_info_of((cg_fn_id)ids[below(g, n)]);
    var *y = fresh(g, a);
    if (op->domain == CG_DOM_POSITIVE) {
        emit(g, "%s = %s(%s * %s + 1)\n", y->name, op->name, a->name, a->name);
        y->mag = strcmp(op->name, "log") == 0 ? log(a->mag * a->mag + 1) : sqrt(a->mag * a->mag + 1);
    } else {
        emit(g, "%s = %s(%s)\n", y->name, op->name, a->name);
        y->mag = strcmp(op->name, "exp") == 0 ? exp(a->mag) : strcmp(op->name, "tanh") == 0 ? 1.0 : a->mag;
    }
    return true;
}

/* softmax / log_softmax over the last axis, or sum / mean / logsumexp over an axis of a matrix. */
static bool axis_op(gen *g)
{
    var *a = pick(g);
    bool reduce = a->ndim == 2 && chance(g, 50);
    int ids[CG_FN_COUNT], n = 0;
    for (int id = 0; id < CG_FN_COUNT; id++) {
        const cg_op_info *op = cg_op_info_of((cg_fn_id)id);
        if (op->diff == CG_DIFF_SMOOTH && op->cls == (reduce ? CG_OPC_AXIS : CG_OPC_AXIS_LAST))
            ids[n++] = id;
    }
    if (n == 0)
        return false;
    const cg_op_info *op = cg_op_info_of((cg_fn_id)ids[below(g, n)]);
    int axis = below(g, 2);
    double summed = a->mag * (double)(axis == 0 ? a->rows : a->cols) + 3;
    if (reduce && summed > g->max_mag)
        return false;
    var *y = fresh(g, a);
    if (!reduce) {
        emit(g, "%s = %s(%s)\n", y->name, op->name, a->name);
        y->mag = strcmp(op->name, "softmax") == 0 ? 1.0 : 2 * a->mag + log((double)(a->ndim == 2 ? a->cols : a->rows));
        return true;
    }
    emit(g, "%s = %s(%s, %d)\n", y->name, op->name, a->name, axis);
    y->ndim = 1;
    y->rows = axis == 0 ? a->cols : a->rows;
    y->mag = summed;
    return true;
}

/* a OP b elementwise on two tensors of one shape, a matmul, or a per-rank
 * scale; a draw whose result could grow past the bound becomes a sum. */
static bool binary(gen *g)
{
    var *a = pick(g), *b = pick_like(g, a);
    if (!b)
        return false;
    int form = below(g, 6);
    double mag[6] = {a->mag + b->mag, a->mag + b->mag, a->mag * b->mag, a->mag,
                     b->mag <= 3 ? pow(a->mag * a->mag + 1, b->mag) : INFINITY,
                     a->ndim == 2 ? a->mag * b->mag * (double)a->cols : a->mag * g->world};
    if (!(mag[form] <= g->max_mag) || (form == 5 && a->ndim == 2 && a->rows * a->rows > MAX_ELEMS))
        form = 0;
    if (g->f16 && mag[form] > g->max_mag)
        return false;
    var *y = fresh(g, a);
    y->replicated = a->replicated && b->replicated;
    y->partly_equal = a->partly_equal || b->partly_equal;
    y->mag = mag[form];
    switch (form) {
    case 0: emit(g, "%s = %s + %s\n", y->name, a->name, b->name); break;
    case 1: emit(g, "%s = %s - %s\n", y->name, a->name, b->name); break;
    case 2: emit(g, "%s = %s * %s\n", y->name, a->name, b->name); break;
    case 3: emit(g, "%s = %s / (%s * %s + 1)\n", y->name, a->name, b->name, b->name); break;
    case 4: emit(g, "%s = pow(%s * %s + 1, %s)\n", y->name, a->name, a->name, b->name); break;
    default:
        if (a->ndim == 2) {
            emit(g, "%s = matmul(%s, transpose(%s))\n", y->name, a->name, b->name);
            y->cols = a->rows;
        } else {
            emit(g, "%s = %s * (rank + 1)\n", y->name, a->name);
            y->replicated = g->world == 1;
        }
    }
    return true;
}

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
    emit(g, "on ");
    for (int k = 0; k < nroots; k++)
        emit(g, "%s%d", k ? ", " : "", roots[k]);
    emit(g, " {\n  backward(sum(%s * %s))\n}\n", y->name, y->name);
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
    var *y = fresh(g, a);
    const char *name = cg_coll_name(k);
    y->replicated = g->world == 1;
    y->partly_equal = true;
    double reduced = op == 2 ? pow(a->mag, p->size) : op == 0 ? a->mag * p->size : a->mag;
    char root[48];
    int roots[8], nroots = 0;
    switch (k) {
    case CG_C_BROADCAST:
        group_root(g, p, root, sizeof root, roots);
        emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, root, p->name);
        break;
    case CG_C_ALL_GATHER:
        emit(g, "%s = %s(%s, group=%s)\n", y->name, name, a->name, p->name);
        y->rows = a->rows * p->size;
        break;
    case CG_C_REDUCE_SCATTER:
        emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, ops[op], p->name);
        y->rows = a->rows / p->size;
        y->mag = reduced;
        break;
    case CG_C_ALL_TO_ALL: /* the shape stays: member or not */
        emit(g, "%s = %s(%s, group=%s)\n", y->name, name, a->name, p->name);
        break;
    case CG_C_SCATTER:
        group_root(g, p, root, sizeof root, roots);
        emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, root, p->name);
        y->rows = a->rows / p->size;
        y->ragged = !p->mesh; /* a non-member keeps its a->rows */
        y->all_rows = 0;      /* no all_gather of it: its rows over the ranks vary by membership */
        break;
    case CG_C_REDUCE:
    case CG_C_GATHER:
        nroots = group_root(g, p, root, sizeof root, roots);
        if (k == CG_C_REDUCE)
            emit(g, "%s = %s(%s, %s, %s, group=%s)\n", y->name, name, a->name, root, ops[op], p->name);
        else
            emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, root, p->name);
        backward_on(g, y, roots, nroots);
        y->root_only = true;
        break;
    default:
        emit(g, "%s = %s(%s, %s, group=%s)\n", y->name, name, a->name, ops[op], p->name);
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
    emit(g, "%s = all_to_all(%s, send_splits=[", y->name, a->name);
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < g->world; r++) {
            emit(g, "%s[", r ? ", " : "");
            for (int j = 0; j < g->world; j++)
                emit(g, "%s%lld", j ? ", " : "", (long long)(pass ? m[j][r] : m[r][j]));
            emit(g, "]");
        }
        emit(g, pass ? "][rank])\n" : "][rank], recv_splits=[");
    }
}

/* A collective of the table on a tensor that fits it. */
static bool collective(gen *g)
{
    static const cg_coll_kind kinds[] = {CG_C_ALL_REDUCE, CG_C_ALL_GATHER, CG_C_REDUCE_SCATTER, CG_C_BROADCAST,
                                         CG_C_ALL_TO_ALL, CG_C_REDUCE,     CG_C_GATHER,         CG_C_SCATTER,
                                         CG_C_SEND};
    static const char *const ops[] = {"sum", "avg", "prod", "max", "min"};
    var *a = pick(g);
    cg_coll_kind k = kinds[below(g, (int)(sizeof kinds / sizeof kinds[0]))];
    if (g->ngrp > 0 && chance(g, 40))
        return group_collective(g, a, k);
    if (k == CG_C_ALL_GATHER) /* a ragged tensor's rows, gathered whole: every rank's alike */
        for (int i = 0; i < g->nv; i++)
            if (g->v[i].ragged && g->v[i].all_rows > 0 && chance(g, 50)) {
                var *y = fresh(g, &g->v[i]);
                emit(g, "%s = all_gather(%s)\n", y->name, g->v[i].name);
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
    var *y = fresh(g, a);
    const char *name = cg_coll_name(k);
    switch (k) {
    case CG_C_ALL_REDUCE:
        emit(g, "%s = %s(%s, %s)\n", y->name, name, a->name, ops[op]);
        y->replicated = true;
        y->mag = op == 2 ? pow(a->mag, g->world) : op == 0 ? a->mag * g->world : a->mag;
        break;
    case CG_C_REDUCE_SCATTER:
        if (g->world > 1 && op != 2 && chance(g, 25)) { /* uneven: rank r gets splits[r] rows */
            int64_t left = a->rows;
            emit(g, "%s = %s(%s, %s, send_splits=[", y->name, name, a->name, ops[op]);
            for (int r = 0; r < g->world; r++) {
                int64_t rows = r == g->world - 1 ? left : below(g, (int)left + 1);
                emit(g, "%s%lld", r ? ", " : "", (long long)rows);
                left -= rows;
            }
            emit(g, "])\n");
            y->ragged = true;
            y->all_rows = a->rows;
        } else {
            emit(g, "%s = %s(%s, %s)\n", y->name, name, a->name, ops[op]);
        }
        y->rows = a->rows / g->world;
        y->replicated = g->world == 1;
        y->mag = op == 2 ? pow(a->mag, g->world) : op == 0 ? a->mag * g->world : a->mag;
        break;
    case CG_C_ALL_GATHER:
        emit(g, "%s = %s(%s)\n", y->name, name, a->name);
        y->rows = a->rows * g->world;
        y->replicated = true;
        break;
    case CG_C_BROADCAST:
        emit(g, "%s = %s(%s, %d)\n", y->name, name, a->name, below(g, g->world));
        y->replicated = true;
        break;
    case CG_C_REDUCE: /* the root's result, read by a backward on the root only */
    case CG_C_GATHER: {
        int root = below(g, g->world);
        if (k == CG_C_REDUCE)
            emit(g, "%s = %s(%s, %d, %s)\n", y->name, name, a->name, root, ops[op]);
        else
            emit(g, "%s = %s(%s, %d)\n", y->name, name, a->name, root);
        emit(g, "on %d {\n  backward(sum(%s * %s))\n}\n", root, y->name, y->name);
        y->root_only = true;
        break;
    }
    case CG_C_SCATTER: /* rank r gets the root's block r */
        emit(g, "%s = %s(%s, %d)\n", y->name, name, a->name, below(g, g->world));
        y->rows = a->rows / g->world;
        y->replicated = g->world == 1;
        break;
    case CG_C_SEND: { /* a ring: each rank sends `shift` ranks on and receives from as many back */
        int shift = 1 + below(g, g->world - 1);
        emit(g, "send(%s, (rank + %d) %% world)\n%s = recv((rank + world - %d) %% world)\n", a->name, shift,
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
            emit(g, "%s = %s(%s)\n", y->name, name, a->name);
        }
        y->replicated = g->world == 1;
        break;
    }
    g->ncoll++;
    return true;
}

char *cg_explore_program(uint64_t seed, long index, const cg_gen_opts *o, const char *name)
{
    gen g = {.s = seed * 0x2545f4914f6cdd1dULL + (uint64_t)index, .cap = 1024};
    if (!(g.text = malloc(g.cap)))
        return NULL;
    next(&g);
    g.world = 1 + below(&g, o->max_world > 0 ? o->max_world : 1);
    static const char *const dtypes[] = {"f64", "f32", "bf16", "f16"};
    int dt = below(&g, o->halves ? 4 : 2);
    const char *dtype = dtypes[dt];
    g.half = dt >= 2;
    g.f16 = dt == 3;
    g.max_mag = g.f16 ? F16_MAX_MAG : MAX_MAG;
    emit(&g, "case %s\nsource collgrad-check explore --seed %llu, program %ld\nworld %d\ndtype %s\n\n", name,
         (unsigned long long)seed, index, g.world, dtype);
    int inputs = 1 + below(&g, 4), colls = 1 + below(&g, 6), locals = below(&g, 5);
    groups(&g);
    for (int i = 0; i < inputs; i++)
        param(&g);
    /* the collectives and local ops interleaved; a draw that does not fit is drawn again */
    for (int tries = 0; (g.ncoll < colls || locals > 0) && g.nv < MAX_VARS - 1 && tries < 200; tries++) {
        bool want_coll = g.ncoll < colls && (locals == 0 || chance(&g, 50));
        bool made = false;
        if (want_coll) {
            made = collective(&g);
        } else {
            int kind = below(&g, 3);
            made = kind == 0 ? unary(&g) : kind == 1 ? axis_op(&g) : binary(&g);
            if (made)
                locals--;
        }
    }
    /* 1-3 per-rank losses, the last tensor's first */
    int nback = 1 + below(&g, 3);
    for (int b = 0; b < nback; b++) {
        const var *t = b == 0 && !g.v[g.nv - 1].root_only ? &g.v[g.nv - 1] : pick(&g);
        for (int k = 0; k < g.nv && b > 0; k++) /* a ragged tensor is read by a loss, once */
            if (g.v[k].ragged) {
                t = &g.v[k];
                g.v[k].ragged = false, g.v[k].root_only = true;
                break;
            }
        emit(&g, "backward(sum(%s * %s) * (rank + 1))\n", t->name, t->name);
    }
    if (g.oom) {
        free(g.text);
        return NULL;
    }
    return g.text;
}
