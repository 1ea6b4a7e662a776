/* tensor.c — the graph arena, its error slot, and tensor construction.
 *
 * The arena is a list of zeroed chunks with a bump pointer: everything a run
 * makes (tensors, their data, tape nodes, scratch) lives until
 * cg_graph_free(), so no op ever frees anything and no error path can leak.
 * Requests too large to share a chunk get a chunk of their own. */
#include "autograd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "big_blocks.h"
#include "cancel.h"
#include "cuda_ops.h"

#define ARENA_CHUNK_BYTES ((size_t)64 * 1024)
#define NONDIFF_LEN 128

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    size_t mapped;     /* a big block's size (big_blocks.h), else 0: calloc'd */
    max_align_t mem[]; /* cap bytes, aligned for any object */
} arena_chunk;

struct cg_graph {
    arena_chunk *chunks;  /* head has the free space; the rest are full or dedicated */
    cg_tensor **tensors;  /* every tensor made in the graph (malloc'd array) */
    int64_t ntensors, cap_tensors;
    int64_t next_id;
    cg_node *tape;        /* newest node first */
    int64_t nalways;      /* always_run nodes on the tape (cg_node_always_run) */
    /* The tensors given a pgrad in the current pass (cg_graph_touch), so the
     * pass folds and drops those, not every tensor of the graph; `pending`
     * counts the ones a node made whose node has not run yet, so the walk
     * stops once nothing older can receive a gradient (autograd.c). */
    cg_tensor **touched;
    int64_t ntouched, cap_touched, pending;
    int64_t walked;       /* tape nodes the passes have visited, in all (a cost the tests bound) */
    cg_status st;              /* the last error: CG_EXIT_USAGE, or CG_EXIT_INFRA (memory, a stop: cancel.h) */
    char nondiff[NONDIFF_LEN]; /* first non-differentiable point met; "" = none */
    cg_cuda_arena *device;     /* non-NULL: tensor data lives here (cg_graph_use_cuda) */
    int64_t max_tensor, max_total; /* element budget (cg_graph_set_limits); 0 = none */
    int ranks;                 /* the ranks max_total is for (the message names one rank's share) */
    int64_t total;             /* elements of every tensor made so far */
    cg_deadline deadline;      /* the run's limit (cg_graph_set_deadline); at 0 = none */
};

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
static void *arena_alloc(cg_graph *g, size_t n, bool zero)
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

void *cg_alloc(cg_graph *g, size_t n) { return arena_alloc(g, n, true); }

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

static int remember_tensor(cg_graph *g, cg_tensor *t)
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

/* ---- construction -------------------------------------------------------- */

static int check_new_shape(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape, int64_t *numel)
{
    if (cg_dtype_size(dt) == 0) {
        cg_error(&g->st, "expected dtype f32, f64, bf16 or f16, got code %d", (int)dt);
        return -1;
    }
    if (ndim < 0 || ndim > CG_MAX_DIMS) {
        cg_error(&g->st, "expected 0 to %d dimensions, got %d", CG_MAX_DIMS, ndim);
        return -1;
    }
    int64_t n = 1;
    int64_t limit = INT64_MAX / (int64_t)cg_dtype_size(dt);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            cg_error(&g->st, "expected non-negative dimensions, got %lld in dimension %d",
                     (long long)shape[d], d);
            return -1;
        }
        if (shape[d] != 0 && n > limit / shape[d]) {
            cg_error_infra(&g->st, "out of memory (tensor dimension %d of %lld overflows)", d,
                           (long long)shape[d]);
            return -1;
        }
        n *= shape[d];
    }
    if (g->max_tensor && n > g->max_tensor) {
        cg_error(&g->st, "expected a tensor of at most %lld elements (the limit; raise it with "
                         "--max-elements), got %lld", (long long)g->max_tensor, (long long)n);
        return -1;
    }
    if (g->max_total && n > g->max_total - g->total) {
        cg_error(&g->st, "expected the tensors of a rank to total at most %lld elements (the limit; "
                         "raise it with --max-case-elements), got more",
                 (long long)(g->max_total / (g->ranks ? g->ranks : 1)));
        return -1;
    }
    *numel = n;
    return 0;
}

/* The tensor struct is always host memory; its data lives on the device
 * when `device` is set (the graph must be a CUDA one). */
static cg_tensor *tensor_new_at(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape,
                                bool device, bool zero)
{
    int64_t numel;
    if (cg_check_cancel(g) < 0) /* every op makes a tensor: the place to answer a stop */
        return NULL;
    if (check_new_shape(g, dt, ndim, shape, &numel) < 0)
        return NULL;
    cg_tensor *t = cg_alloc(g, sizeof *t);
    if (!t)
        return NULL;
    size_t bytes = (size_t)numel * cg_dtype_size(dt);
    t->data = device ? cg_alloc_data(g, bytes) : arena_alloc(g, bytes, zero);
    t->on_device = device;
    if (!t->data || remember_tensor(g, t) < 0)
        return NULL;
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++)
        t->shape[d] = shape[d];
    t->numel = numel;
    t->dtype = dt;
    t->id = g->next_id++;
    g->total += numel;
    return t;
}

cg_tensor *cg_tensor_new(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape)
{
    return tensor_new_at(g, dt, ndim, shape, g->device != NULL, true);
}

cg_tensor *cg_tensor_new_unset(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape)
{
    return tensor_new_at(g, dt, ndim, shape, g->device != NULL, false);
}

cg_tensor *cg_tensor_new_host(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape)
{
    return tensor_new_at(g, dt, ndim, shape, false, true);
}

cg_tensor *cg_tensor_like(cg_graph *g, const cg_tensor *t)
{
    return cg_tensor_new(g, t->dtype, t->ndim, t->shape);
}

/* Built on the host, then placed: a constant is an input to load. */
cg_tensor *cg_full(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape, double v)
{
    cg_tensor *t = cg_tensor_new_host(g, dt, ndim, shape);
    if (!t || cg_tensor_fill(g, t, v) < 0) /* on the host: one pass, never fails */
        return NULL;
    return cg_tensor_place(g, t);
}

cg_tensor *cg_scalar(cg_graph *g, cg_dtype dt, double v)
{
    return cg_full(g, dt, 0, NULL, v);
}

cg_tensor *cg_tensor_cast(cg_graph *g, const cg_tensor *t, cg_dtype dt)
{
    cg_tensor *c = cg_tensor_new(g, dt, t->ndim, t->shape);
    if (!c)
        return NULL;
    if (c->on_device != t->on_device) {
        cg_error(&g->st, "cg_tensor_cast: the tensor is not where the graph's tensors are");
        return NULL;
    }
    if (c->on_device)
        return cg_cuda_convert(dt, c->data, t->dtype, t->data, t->numel) < 0
                   ? (cg_error_cuda(&g->st), NULL)
                   : c;
    for (int64_t i = 0; i < t->numel; i++)
        cg_set(c, i, cg_get(t, i));
    return c;
}

/* ---- shapes -------------------------------------------------------------- */

bool cg_same_shape(const cg_tensor *a, const cg_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

/* Appends text at buf + *used, keeping *used inside buf when it truncates. */
static void append(char *buf, size_t len, size_t *used, const char *text)
{
    int w = snprintf(buf + *used, len - *used, "%s", text);
    if (w > 0)
        *used += (size_t)w < len - *used ? (size_t)w : len - *used - 1;
}

/* "[2,3]", "[]" for a scalar; truncated (still NUL-terminated) if len is short. */
char *cg_shape_str(const cg_tensor *t, char *buf, size_t len)
{
    return cg_dims_str(t->ndim, t->shape, buf, len);
}

char *cg_dims_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    size_t used = 0;
    buf[0] = '\0';
    append(buf, len, &used, "[");
    for (int d = 0; d < ndim; d++) {
        char dim[24];
        snprintf(dim, sizeof dim, d ? ",%lld" : "%lld", (long long)shape[d]);
        append(buf, len, &used, dim);
    }
    append(buf, len, &used, "]");
    return buf;
}

void cg_strides(int ndim, const int64_t *shape, int64_t *st)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        st[d] = s;
        s *= shape[d];
    }
}
