/* explore_gen_state.h — private to the program generator (explore_gen.h):
 * its state (the named tensors and what each may be used for, the groups,
 * the text so far), its deterministic draws, and the helpers its local
 * statements (explore_gen.c) and its collectives (explore_gen_coll.c) share. */
#ifndef CG_EXPLORE_GEN_STATE_H
#define CG_EXPLORE_GEN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore_gen.h"

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

static inline uint64_t next(gen *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline int below(gen *g, int n) { return n > 0 ? (int)(next(g) % (uint64_t)n) : 0; }
static inline bool chance(gen *g, int percent) { return below(g, 100) < percent; }

/* ---- shared helpers (explore_gen.c) ---------------------------------------- */

/* Appends to the program's text; out of memory sets g->oom. */
__attribute__((format(printf, 2, 3))) void cgg_emit(gen *g, const char *fmt, ...);
/* A new named tensor v<k> like `like`. */
var *cgg_fresh(gen *g, const var *like);
static inline int64_t numel(const var *t) { return t->ndim == 1 ? t->rows : t->rows * t->cols; }
static inline bool same_shape(const var *a, const var *b)
{
    return a->ndim == b->ndim && a->rows == b->rows && (a->ndim == 1 || a->cols == b->cols);
}
/* "rows" or "rows, cols". */
void cgg_shape_text(const var *t, char *out, size_t n);
/* A random named tensor any statement may read; among the last few more
 * often (deeper programs). The params always qualify. */
var *cgg_pick(gen *g);
/* Another tensor of a's shape, or NULL. */
var *cgg_pick_like(gen *g, const var *a);

/* ---- collectives (explore_gen_coll.c) ----------------------------------------- */

/* One collective statement on a tensor that fits it; false when the draw
 * fits none (the caller draws again). */
bool cgg_collective(gen *g);

#endif
