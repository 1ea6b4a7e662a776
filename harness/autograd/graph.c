/* graph.c — the graph: its arena, its error slot and non-differentiable
 * points, and the bookkeeping autograd.c keeps in it (the tape, the tensors a
 * pass touched). Tensors are made in tensor.c.
 *
 * The arena is a list of zeroed chunks with a bump pointer: everything a run
 * makes (tensors, their data, tape nodes, scratch) lives until
 * cg_graph_free(), so no op ever frees anything and no error path can leak.
 * Requests too large to share a chunk get a chunk of their own. */
#include "graph_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "big_blocks.h"
#include "cancel.h"

/* ---- the arena ----------------------------------------------------------- */

cg_graph *cg_graph_new(void)
{
    cg_graph *g = calloc(1, sizeof(cg_graph));
    if (g)
        cg_big_enter(); /* a step of big blocks begins, or nests (big_blocks.h) */
    return g;
}

void cg_graph_set_limits(cg_graph *g, int64_t per_tensor, int64_t per_rank, int ranks)
{
    g->max_tensor = per_tensor;
    g->max_total = per_rank > 0 && ranks > 0 && per_rank <= INT64_MAX / ranks ? per_rank * ranks : 0;
    g->ranks = ranks;
}

void cg_graph_free(cg_graph *g)
{
    if (!g)
        return;
    for (arena_chunk *c = g->chunks, *next; c; c = next) {
        next = c->next;
        if (c->mapped)
            cg_big_free(c, c->mapped);
        else
            free(c);
    }
    cg_cuda_arena_free(g->device);
    free(g->tensors);
    free(g->touched);
    free(g);
    cg_big_leave();
}

int cg_graph_use_cuda(cg_graph *g)
{
    if (g->device)
        return 0;
    if (g->ntensors > 0) {
        cg_error(&g->st, "cg_graph_use_cuda: the graph already has host tensors");
        return -1;
    }
#ifndef HAVE_CUDA
    cg_error(&g->st, "%s", cg_cuda_last_error());
    return -1;
#else
    g->device = cg_cuda_arena_new();
    if (!g->device)
        cg_error_infra(&g->st, "out of memory (device arena)");
    return g->device ? 0 : -1;
#endif
}

bool cg_graph_on_cuda(const cg_graph *g)
{
    return g->device != NULL;
}

void *cg_alloc_data(cg_graph *g, size_t n)
{
    if (!g->device)
        return cg_alloc(g, n);
    void *p = cg_cuda_alloc(g->device, n);
    if (!p)
        cg_error_cuda(&g->st);
    return p;
}

int cg_error_cuda(cg_status *st) { return cg_error(st, "%s", cg_cuda_last_error()); }

static arena_chunk *chunk_new(size_t cap)
{
    arena_chunk *c = calloc(1, sizeof(arena_chunk) + cap);
    if (c)
        c->cap = cap;
    return c;
}

/* A big request gets its own chunk, linked behind the head so the head's
 * free space stays usable for the small requests that follow; tensor data
 * of a MiB and more comes from the big-block cache (big_blocks.h). */
static void *alloc_dedicated(cg_graph *g, size_t n, bool zero)
{
    size_t mapped = 0, whole = sizeof(arena_chunk) + n;
    arena_chunk *c = whole < CG_BIG_BLOCK ? chunk_new(n)
                     : zero         ? cg_big_alloc(whole, &mapped)
                                    : cg_big_alloc_unset(whole, sizeof(arena_chunk), &mapped);
    if (!c)
        return NULL;
    c->cap = n;
    c->mapped = mapped;
    c->used = n;
    if (g->chunks) {
        c->next = g->chunks->next;
        g->chunks->next = c;
    } else {
        g->chunks = c;
    }
    return c->mem;
}

/* n bytes from the arena; zeroed unless !zero, where a big block may come
 * back poisoned instead (cg_big_alloc_unset). NULL + error on OOM. */
void *cg_graph_arena_alloc(cg_graph *g, size_t n, bool zero)
{
    const size_t align = _Alignof(max_align_t);
    if (n > SIZE_MAX - sizeof(arena_chunk) - align) {
        cg_error_infra(&g->st, "out of memory (asked for %zu bytes)", n);
        return NULL;
    }
    if (n == 0)
        n = 1; /* every request gets its own address */
    n = (n + align - 1) / align * align;
    if (n > ARENA_CHUNK_BYTES / 4) {
        void *p = alloc_dedicated(g, n, zero);
        if (!p)
            cg_error_infra(&g->st, "out of memory (asked for %zu bytes)", n);
        return p;
    }
    arena_chunk *c = g->chunks;
    if (!c || c->cap - c->used < n) {
        c = chunk_new(ARENA_CHUNK_BYTES);
        if (!c) {
            cg_error_infra(&g->st, "out of memory (asked for %zu bytes)", n);
            return NULL;
        }
        c->next = g->chunks;
        g->chunks = c;
    }
    void *p = (char *)c->mem + c->used;
    c->used += n;
    return p;
}

void *cg_alloc(cg_graph *g, size_t n) { return cg_graph_arena_alloc(g, n, true); }

char *cg_strdup(cg_graph *g, const char *s)
{
    size_t len = strlen(s) + 1;
    char *d = cg_alloc(g, len);
    if (d)
        memcpy(d, s, len);
    return d;
}

/* ---- errors and non-differentiable points -------------------------------- */

cg_status *cg_graph_status(cg_graph *g) { return &g->st; }

int cg_check_cancel(cg_graph *g)
{
    if (!cg_cancelled(&g->deadline))
        return 0;
    char why[128];
    return cg_error_infra(&g->st, "%s", cg_cancel_reason(&g->deadline, why, sizeof why));
}

void cg_graph_set_deadline(cg_graph *g, cg_deadline d) { g->deadline = d; }

/* The first reason is kept: it names the earliest op that broke smoothness. */
void cg_note_nondiff(cg_graph *g, const char *reason)
{
    if (g->nondiff[0] == '\0')
        snprintf(g->nondiff, sizeof g->nondiff, "%s", reason[0] ? reason : "non-differentiable point");
}

const char *cg_graph_nondiff(const cg_graph *g)
{
    return g->nondiff[0] ? g->nondiff : NULL;
}

/* ---- bookkeeping for autograd.c ------------------------------------------ */

cg_tensor *const *cg_graph_tensors(const cg_graph *g, int64_t *n)
{
    *n = g->ntensors;
    return g->tensors;
}

cg_node *cg_graph_tape(const cg_graph *g)
{
    return g->tape;
}

void cg_node_always_run(cg_graph *g, cg_node *n)
{
    if (!n->always_run)
        g->nalways++;
    n->always_run = true;
}

int64_t cg_graph_always_run_count(const cg_graph *g)
{
    return g->nalways;
}

int cg_graph_touch(cg_graph *g, cg_tensor *t)
{
    if (g->ntouched == g->cap_touched) {
        int64_t cap = g->cap_touched ? 2 * g->cap_touched : 64;
        cg_tensor **grown = realloc(g->touched, (size_t)cap * sizeof *grown);
        if (!grown) {
            cg_error_infra(&g->st, "out of memory (the backward pass's gradient list)");
            return -1;
        }
        g->touched = grown;
        g->cap_touched = cap;
    }
    g->touched[g->ntouched++] = t;
    if (t->node)
        g->pending++;
    return 0;
}

cg_tensor *const *cg_graph_touched(const cg_graph *g, int64_t *n)
{
    *n = g->ntouched;
    return g->touched;
}

int64_t cg_graph_pending(const cg_graph *g)
{
    return g->pending;
}

void cg_graph_count_walked(cg_graph *g, int64_t n)
{
    g->walked += n;
}

int64_t cg_graph_nodes_walked(const cg_graph *g)
{
    return g->walked;
}

void cg_graph_node_ran(cg_graph *g)
{
    g->pending--;
}

void cg_graph_untouch_all(cg_graph *g)
{
    g->ntouched = 0;
    g->pending = 0;
}

void cg_graph_push_tape(cg_graph *g, cg_node *n)
{
    n->prev = g->tape;
    g->tape = n;
}

int cg_graph_remember(cg_graph *g, cg_tensor *t)
{
    if (g->ntensors == g->cap_tensors) {
        int64_t cap = g->cap_tensors ? 2 * g->cap_tensors : 64;
        cg_tensor **grown = realloc(g->tensors, (size_t)cap * sizeof *grown);
        if (!grown) {
            cg_error_infra(&g->st, "out of memory (tensor list of %lld)", (long long)cap);
            return -1;
        }
        g->tensors = grown;
        g->cap_tensors = cap;
    }
    g->tensors[g->ntensors++] = t;
    return 0;
}

