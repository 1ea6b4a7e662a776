/* tensor.c — making tensors in a graph (within its element budget, on its
 * device) and their shapes; the graph itself is graph.c's. */
#include "graph_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    t->data = device ? cg_alloc_data(g, bytes) : cg_graph_arena_alloc(g, bytes, zero);
    t->on_device = device;
    if (!t->data || cg_graph_remember(g, t) < 0)
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
