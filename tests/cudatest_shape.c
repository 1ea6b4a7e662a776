/* cudatest_shape.c — the shape ops (transpose, cat, slice, index, reshape,
 * clone) and matmul: CUDA against the CPU ops (cudatest_harness.h). */
#include <string.h>

#include "cudatest_harness.h"

/* ---- transpose ----------------------------------------------------------------- */

/* a as [batch, rows, cols] over its last two axes (one row below 2-D). */
static void matrix_of(const cg_tensor *a, int64_t *batch, int64_t *rows, int64_t *cols)
{
    *rows = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
    *cols = a->ndim >= 2 ? a->shape[a->ndim - 1] : a->numel;
    *batch = *rows * *cols != 0 ? a->numel / (*rows * *cols) : 0;
}
static cg_tensor *cpu_transpose(cg_graph *g, op_test *t) { return cg_transpose(g, t->in[0]); }
static int dev_transpose(op_test *t)
{
    int64_t b, r, c;
    matrix_of(t->in[0], &b, &r, &c);
    return cg_cuda_transpose(t->dt, t->din[0], b, r, c, t->dout);
}
static int dev_transpose_bwd(op_test *t)
{
    int64_t b, r, c;
    matrix_of(t->in[0], &b, &r, &c);
    return cg_cuda_transpose_backward(t->dt, t->dgout, b, r, c, t->dgin[0]);
}

/* ---- cat ------------------------------------------------------------------------- */

/* Output rows and inner size around the axis, and each input's width on it. */
static cg_cuda_axis cat_view(const op_test *t, int64_t *widths)
{
    int axis = (int)t->arg[0];
    for (int j = 0; j < t->nin; j++)
        widths[j] = t->in[j]->shape[axis];
    return cg_cuda_axis_of(t->out->ndim, t->out->shape, axis);
}
static cg_tensor *cpu_cat(cg_graph *g, op_test *t)
{
    return cg_cat(g, t->in, t->nin, (int)t->arg[0]);
}
static int dev_cat(op_test *t)
{
    int64_t widths[MAX_IN];
    cg_cuda_axis v = cat_view(t, widths);
    return cg_cuda_cat(t->dt, (const void *const *)t->din, widths, t->nin, v.outer, v.inner,
                       t->dout);
}
static int dev_cat_bwd(op_test *t)
{
    int64_t widths[MAX_IN];
    cg_cuda_axis v = cat_view(t, widths);
    return cg_cuda_cat_backward(t->dt, t->dgout, widths, t->nin, v.outer, v.inner, t->dgin);
}

/* ---- slice and index ---------------------------------------------------------------- */

static cg_tensor *cpu_slice(cg_graph *g, op_test *t)
{
    return cg_slice(g, t->in[0], (int)t->arg[0], t->arg[1], t->arg[2]);
}
static int dev_slice(op_test *t)
{
    cg_cuda_axis v = cg_cuda_axis_of(t->in[0]->ndim, t->in[0]->shape, (int)t->arg[0]);
    return cg_cuda_slice(t->dt, v, t->arg[1], t->arg[2] - t->arg[1], t->din[0], t->dout);
}
static int dev_slice_bwd(op_test *t)
{
    cg_cuda_axis v = cg_cuda_axis_of(t->in[0]->ndim, t->in[0]->shape, (int)t->arg[0]);
    return cg_cuda_slice_backward(t->dt, v, t->arg[1], t->arg[2] - t->arg[1], t->dgout,
                                  t->dgin[0]);
}

static cg_tensor *cpu_index(cg_graph *g, op_test *t) { return cg_index(g, t->in[0], t->arg[0]); }
static int dev_index(op_test *t)
{
    int64_t len = t->in[0]->shape[0];
    return cg_cuda_index(t->dt, t->din[0], len, t->in[0]->numel / len, t->arg[0], t->dout);
}
static int dev_index_bwd(op_test *t)
{
    int64_t len = t->in[0]->shape[0];
    return cg_cuda_index_backward(t->dt, t->dgout, len, t->in[0]->numel / len, t->arg[0],
                                  t->dgin[0]);
}

/* ---- reshape and clone: a copy forward, an accumulate backward ------------------------ */

static cg_tensor *cpu_reshape(cg_graph *g, op_test *t)
{
    const int64_t shape[2] = {5, 4};
    return t->op ? cg_clone(g, t->in[0]) : cg_reshape(g, t->in[0], 2, shape);
}
static int dev_copy(op_test *t)
{
    return cg_cuda_copy(t->dout, t->din[0], (size_t)t->out->numel * cg_dtype_size(t->dt));
}
static int dev_copy_bwd(op_test *t)
{
    return cg_cuda_accumulate(t->dt, t->dgin[0], t->dgout, t->out->numel);
}

void test_shape(cg_dtype dt)
{
    static const int64_t cube[3] = {2, 3, 4}, row[1] = {5}, m45[2] = {4, 5};
    static const int64_t cat_shapes[3][3] = {{2, 1, 3}, {2, 0, 3}, {2, 2, 3}};
    op_test t;
    for (int c = 0; c < 2; c++) {
        cg_graph *g = test_start(&t, dt, "transpose %s", c ? "[5]" : "[2,3,4]");
        t.nin = 1;
        t.in[0] = c ? param(g, dt, 1, row, -2, 2) : param(g, dt, 3, cube, -2, 2);
        test_run(g, &t, cpu_transpose, dev_transpose, dev_transpose_bwd);
    }
    for (int axis = 0; axis < 2; axis++) { /* widths 1, 0, 2 on axis 1; 2, 2, 2 on axis 0 */
        cg_graph *g = test_start(&t, dt, "cat of 3 on axis %d", axis);
        t.nin = 3;
        t.arg[0] = axis;
        for (int j = 0; j < 3; j++)
            t.in[j] = param(g, dt, 3, axis ? cat_shapes[j] : cat_shapes[0], -2, 2);
        test_run(g, &t, cpu_cat, dev_cat, dev_cat_bwd);
    }
    static const int64_t slices[2][3] = {{1, 1, 4}, {0, 2, 4}}; /* axis, start, stop */
    for (int s = 0; s < 2; s++) {
        cg_graph *g = test_start(&t, dt, "slice [4,5] axis %lld [%lld:%lld]",
                                 (long long)slices[s][0], (long long)slices[s][1],
                                 (long long)slices[s][2]);
        t.nin = 1;
        memcpy(t.arg, slices[s], sizeof slices[s]);
        t.in[0] = param(g, dt, 2, m45, -2, 2);
        test_run(g, &t, cpu_slice, dev_slice, dev_slice_bwd);
    }
    cg_graph *g = test_start(&t, dt, "index [4,5][2]");
    t.nin = 1;
    t.arg[0] = 2;
    t.in[0] = param(g, dt, 2, m45, -2, 2);
    test_run(g, &t, cpu_index, dev_index, dev_index_bwd);
    for (int op = 0; op < 2; op++) {
        g = test_start(&t, dt, "%s", op ? "clone" : "reshape [4,5] -> [5,4]");
        t.op = op;
        t.nin = 1;
        t.in[0] = param(g, dt, 2, m45, -2, 2);
        test_run(g, &t, cpu_reshape, dev_copy, dev_copy_bwd);
    }
}

/* ---- matmul ------------------------------------------------------------------------- */

/* The [m,k]@[k,n] view, with numpy's 1-D operands (ops_matmul.c). */
static void mm_dims(const op_test *t, int64_t *m, int64_t *k, int64_t *n)
{
    const cg_tensor *a = t->in[0], *b = t->in[1];
    *m = a->ndim == 2 ? a->shape[0] : 1;
    *k = a->shape[a->ndim - 1];
    *n = b->ndim == 2 ? b->shape[1] : 1;
}
static cg_tensor *cpu_matmul(cg_graph *g, op_test *t) { return cg_matmul(g, t->in[0], t->in[1]); }
static int dev_matmul(op_test *t)
{
    int64_t m, k, n;
    mm_dims(t, &m, &k, &n);
    return cg_cuda_matmul(t->dt, t->din[0], t->din[1], t->dout, m, k, n);
}
static int dev_matmul_bwd(op_test *t)
{
    int64_t m, k, n;
    mm_dims(t, &m, &k, &n);
    return cg_cuda_matmul_backward(t->dt, t->din[0], t->din[1], t->dgout, t->dgin[0], t->dgin[1],
                                   m, k, n);
}

/* Positive operands: f32 sums its dot products in f32 (the CPU in double),
 * and without cancellation that stays within f32's tolerance. */
void test_matmul(cg_dtype dt)
{
    static const struct {
        int nda, ndb;
        int64_t a[2], b[2];
    } cases[] = {
        {2, 2, {3, 4}, {4, 5}}, {1, 2, {4}, {4, 5}},     {2, 1, {3, 4}, {4}},
        {1, 1, {4}, {4}},       {2, 2, {17, 33}, {33, 9}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        op_test t;
        cg_graph *g = test_start(&t, dt, "matmul %dD@%dD [%lld..]@[..%lld]", cases[c].nda,
                                 cases[c].ndb, (long long)cases[c].a[0],
                                 (long long)cases[c].b[cases[c].ndb - 1]);
        t.nin = 2;
        t.in[0] = param(g, dt, cases[c].nda, cases[c].a, 0.5, 1);
        t.in[1] = param(g, dt, cases[c].ndb, cases[c].b, 0.5, 1);
        test_run(g, &t, cpu_matmul, dev_matmul, dev_matmul_bwd);
    }
}
