/* explore_gen.c — random programs, valid by construction (explore_gen.h).
 *
 * The generator keeps, for every tensor it has named, its shape, whether
 * every rank holds the same values (replicated: an all_reduce's result, a
 * broadcast's) and a bound on its magnitude, and draws only statements whose
 * every argument fits: split collectives get rows that divide by the world,
 * MAX/MIN get values that differ between ranks, exp and pow get inputs whose
 * result stays far from overflow, log and sqrt get v * v + 1. Which local
 * ops exist, what they take and where they are smooth is the op table's.
 *
 * Here: the text and tensor helpers, params, groups, local ops and the
 * program itself; the collective statements are explore_gen_coll.c. */
#include "explore_gen.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore_gen_state.h"
#include "op_table.h"

/* ---- text ------------------------------------------------------------------ */

void cgg_emit(gen *g, const char *fmt, ...)
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

var *cgg_fresh(gen *g, const var *like)
{
    var *t = &g->v[g->nv];
    *t = *like;
    snprintf(t->name, sizeof t->name, "v%d", g->nv);
    g->nv++;
    return t;
}

void cgg_shape_text(const var *t, char *out, size_t n)
{
    if (t->ndim == 1)
        snprintf(out, n, "%lld", (long long)t->rows);
    else
        snprintf(out, n, "%lld, %lld", (long long)t->rows, (long long)t->cols);
}

var *cgg_pick(gen *g)
{
    int n = g->nv, k = chance(g, 60) && n > 2 ? n - 1 - below(g, 2) : below(g, n);
    while (g->v[k].root_only || g->v[k].ragged)
        k = k > 0 ? k - 1 : n - 1;
    return &g->v[k];
}

var *cgg_pick_like(gen *g, const var *a)
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
    var *x = cgg_fresh(g, &t);
    snprintf(x->name, sizeof x->name, "x%d", g->nv - 1);
    char shape[48];
    cgg_shape_text(x, shape, sizeof shape);
    cgg_emit(g, "%s = param(randn(%s))\n", x->name, shape);
}

/* Maybe a process group or a mesh, made before anything else (every rank
 * makes every group): a subset of 2..W-1 ranks at W >= 3, or at W = 4, 6, 8
 * a [2, W/2] mesh (tp: a row of W/2 ranks, dp: a column of 2). */
static void groups(gen *g)
{
    if (g->world >= 4 && g->world % 2 == 0 && chance(g, 25)) {
        g->grp[g->ngrp++] = (pgroup){"tp", g->world / 2, true, {0}};
        g->grp[g->ngrp++] = (pgroup){"dp", 2, true, {0}};
        cgg_emit(g, "tp, dp = mesh([2, %d])\n", g->world / 2);
    }
    if (g->world >= 3 && chance(g, 30)) {
        pgroup *p = &g->grp[g->ngrp++];
        *p = (pgroup){"g0", 0, false, {0}};
        int size = 2 + below(g, g->world - 2); /* 2..W-1 */
        for (int r = 0; r < g->world; r++) /* size of the W ranks, in order (selection sampling) */
            if (below(g, g->world - r) < size - p->size)
                p->members[p->size++] = r;
        cgg_emit(g, "g0 = group([");
        for (int k = 0; k < p->size; k++)
            cgg_emit(g, "%s%d", k ? ", " : "", p->members[k]);
        cgg_emit(g, "])\n");
    }
}

/* A unary op of the table, smooth, same shape: its domain by construction. */
static bool unary(gen *g)
{
    var *a = cgg_pick(g);
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
    var *y = cgg_fresh(g, a);
    if (op->domain == CG_DOM_POSITIVE) {
        cgg_emit(g, "%s = %s(%s * %s + 1)\n", y->name, op->name, a->name, a->name);
        y->mag = strcmp(op->name, "log") == 0 ? log(a->mag * a->mag + 1) : sqrt(a->mag * a->mag + 1);
    } else {
        cgg_emit(g, "%s = %s(%s)\n", y->name, op->name, a->name);
        y->mag = strcmp(op->name, "exp") == 0 ? exp(a->mag) : strcmp(op->name, "tanh") == 0 ? 1.0 : a->mag;
    }
    return true;
}

/* softmax / log_softmax over the last axis, or sum / mean / logsumexp over an axis of a matrix. */
static bool axis_op(gen *g)
{
    var *a = cgg_pick(g);
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
    var *y = cgg_fresh(g, a);
    if (!reduce) {
        cgg_emit(g, "%s = %s(%s)\n", y->name, op->name, a->name);
        y->mag = strcmp(op->name, "softmax") == 0 ? 1.0 : 2 * a->mag + log((double)(a->ndim == 2 ? a->cols : a->rows));
        return true;
    }
    cgg_emit(g, "%s = %s(%s, %d)\n", y->name, op->name, a->name, axis);
    y->ndim = 1;
    y->rows = axis == 0 ? a->cols : a->rows;
    y->mag = summed;
    return true;
}

/* a OP b elementwise on two tensors of one shape, a matmul, or a per-rank
 * scale; a draw whose result could grow past the bound becomes a sum. */
static bool binary(gen *g)
{
    var *a = cgg_pick(g), *b = cgg_pick_like(g, a);
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
    var *y = cgg_fresh(g, a);
    y->replicated = a->replicated && b->replicated;
    y->partly_equal = a->partly_equal || b->partly_equal;
    y->mag = mag[form];
    switch (form) {
    case 0: cgg_emit(g, "%s = %s + %s\n", y->name, a->name, b->name); break;
    case 1: cgg_emit(g, "%s = %s - %s\n", y->name, a->name, b->name); break;
    case 2: cgg_emit(g, "%s = %s * %s\n", y->name, a->name, b->name); break;
    case 3: cgg_emit(g, "%s = %s / (%s * %s + 1)\n", y->name, a->name, b->name, b->name); break;
    case 4: cgg_emit(g, "%s = pow(%s * %s + 1, %s)\n", y->name, a->name, a->name, b->name); break;
    default:
        if (a->ndim == 2) {
            cgg_emit(g, "%s = matmul(%s, transpose(%s))\n", y->name, a->name, b->name);
            y->cols = a->rows;
        } else {
            cgg_emit(g, "%s = %s * (rank + 1)\n", y->name, a->name);
            y->replicated = g->world == 1;
        }
    }
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
    cgg_emit(&g, "case %s\nsource collgrad-check explore --seed %llu, program %ld\nworld %d\ndtype %s\n\n", name,
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
            made = cgg_collective(&g);
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
        const var *t = b == 0 && !g.v[g.nv - 1].root_only ? &g.v[g.nv - 1] : cgg_pick(&g);
        for (int k = 0; k < g.nv && b > 0; k++) /* a ragged tensor is read by a loss, once */
            if (g.v[k].ragged) {
                t = &g.v[k];
                g.v[k].ragged = false, g.v[k].root_only = true;
                break;
            }
        cgg_emit(&g, "backward(sum(%s * %s) * (rank + 1))\n", t->name, t->name);
    }
    if (g.oom) {
        free(g.text);
        return NULL;
    }
    return g.text;
}
