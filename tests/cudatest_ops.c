/* cudatest_ops.c — every CUDA kernel of harness/cuda against its CPU op, in
 * f32, f64, bf16 and f16 (cudatest_harness.h says how each is checked); the
 * shape ops and matmul are in cudatest_shape.c.
 *
 * Without a CUDA device it prints "SKIP: no CUDA device (...)" and exits 77,
 * which ctest reports as skipped (SKIP_RETURN_CODE in tests/CMakeLists.txt). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatest_harness.h"

#define SKIP_CODE 77

/* ---- elementwise ------------------------------------------------------------ */

static cg_tensor *cpu_binary(cg_graph *g, op_test *t)
{
    static cg_tensor *(*const fns[])(cg_graph *, cg_tensor *, cg_tensor *) = {
        cg_add, cg_sub, cg_mul, cg_div, cg_pow};
    return fns[t->op](g, t->in[0], t->in[1]);
}
static int dev_binary(op_test *t)
{
    return cg_cuda_binary(t->op, t->dt, t->din[0], t->in[0]->numel, t->din[1], t->in[1]->numel,
                          t->dout, t->out->numel);
}
static int dev_binary_bwd(op_test *t)
{
    return cg_cuda_binary_backward(t->op, t->dt, t->din[0], t->in[0]->numel, t->din[1],
                                   t->in[1]->numel, t->dgout, t->out->numel, t->dgin[0],
                                   t->dgin[1]);
}

/* Same shapes, then a numel-1 a, then a numel-1 b. div keeps b away from 0
 * and pow keeps a positive. */
static void test_binary(cg_dtype dt)
{
    static const char *const names[] = {"add", "sub", "mul", "div", "pow"};
    static const char *const layouts[] = {"[3,5]x[3,5]", "[1]x[3,5]", "[3,5]x[1]"};
    static const double lo_a[] = {-2, -2, -2, -2, 0.5}, lo_b[] = {-2, -2, -2, 0.5, -2};
    const int64_t full[2] = {3, 5}, one[1] = {1};
    for (int op = 0; op < 5; op++)
        for (int layout = 0; layout < 3; layout++) {
            op_test t;
            cg_graph *g = test_start(&t, dt, "%s %s", names[op], layouts[layout]);
            t.op = op;
            t.nin = 2;
            t.in[0] = layout == 1 ? param(g, dt, 1, one, lo_a[op], 2)
                                  : param(g, dt, 2, full, lo_a[op], 2);
            t.in[1] = layout == 2 ? param(g, dt, 1, one, lo_b[op], 2)
                                  : param(g, dt, 2, full, lo_b[op], 2);
            test_run(g, &t, cpu_binary, dev_binary, dev_binary_bwd);
        }
}

static cg_tensor *cpu_unary(cg_graph *g, op_test *t)
{
    static cg_tensor *(*const fns[])(cg_graph *, cg_tensor *) = {cg_neg,  cg_exp, cg_log, cg_tanh,
                                                                 cg_relu, cg_abs, cg_gelu};
    return fns[t->op](g, t->in[0]);
}
static int dev_unary(op_test *t)
{
    return cg_cuda_unary(t->op, t->dt, t->din[0], t->dout, t->out->numel);
}
static int dev_unary_bwd(op_test *t)
{
    return cg_cuda_unary_backward(t->op, t->dt, t->din[0], t->dgout, t->dgin[0], t->out->numel);
}

/* relu and abs get one exact 0: their gradient there is 0 on both sides. */
static void test_unary(cg_dtype dt)
{
    static const char *const names[] = {"neg", "exp", "log", "tanh", "relu", "abs", "gelu"};
    const int64_t shape[2] = {4, 5};
    for (int op = 0; op <= CG_CUDA_GELU; op++) {
        op_test t;
        cg_graph *g = test_start(&t, dt, "%s", names[op]);
        t.op = op;
        t.nin = 1;
        t.in[0] = param(g, dt, 2, shape, op == CG_CUDA_LOG ? 0.2 : -2.0, 2.0);
        if (op == CG_CUDA_RELU || op == CG_CUDA_ABS)
            cg_set(t.in[0], 3, 0.0);
        test_run(g, &t, cpu_unary, dev_unary, dev_unary_bwd);
    }
}

/* ---- reductions -------------------------------------------------------------- */

static cg_cuda_axis view_of(const op_test *t)
{
    return cg_cuda_axis_of(t->in[0]->ndim, t->in[0]->shape, (int)t->arg[0]);
}
static cg_tensor *cpu_reduce(cg_graph *g, op_test *t)
{
    static cg_tensor *(*const fns[])(cg_graph *, cg_tensor *, int) = {
        cg_sum, cg_mean, cg_logsumexp, cg_log_softmax};
    return fns[t->op](g, t->in[0], (int)t->arg[0]);
}
static int dev_reduce(op_test *t)
{
    static int (*const fns[])(cg_dtype, cg_cuda_axis, const void *, void *) = {
        cg_cuda_sum, cg_cuda_mean, cg_cuda_logsumexp, cg_cuda_log_softmax};
    return fns[t->op](t->dt, view_of(t), t->din[0], t->dout);
}
static int dev_reduce_bwd(op_test *t)
{
    cg_cuda_axis v = view_of(t);
    switch (t->op) {
    case 0: return cg_cuda_sum_backward(t->dt, v, t->dgout, t->dgin[0]);
    case 1: return cg_cuda_mean_backward(t->dt, v, t->dgout, t->dgin[0]);
    case 2: return cg_cuda_logsumexp_backward(t->dt, v, t->din[0], t->dgout, t->dgin[0]);
    default: return cg_cuda_log_softmax_backward(t->dt, v, t->din[0], t->dgout, t->dgin[0]);
    }
}

/* Every axis of a 3-D tensor, and rows of 600 (more than a block's threads). */
static void test_reduce(cg_dtype dt)
{
    static const char *const names[] = {"sum", "mean", "logsumexp", "log_softmax"};
    static const int64_t cube[3] = {3, 4, 5}, wide[2] = {2, 600};
    for (int op = 0; op < 4; op++)
        for (int c = 0; c < 6; c++) {
            int axis = c < 4 ? c - 1 : c == 4 ? -1 : 1;
            op_test t;
            cg_graph *g = test_start(&t, dt, "%s %s axis %d", names[op],
                                     c < 4 ? "[3,4,5]" : "[2,600]", axis);
            t.op = op;
            t.nin = 1;
            t.arg[0] = axis;
            t.in[0] = c < 4 ? param(g, dt, 3, cube, -3, 3) : param(g, dt, 2, wide, -3, 3);
            test_run(g, &t, cpu_reduce, dev_reduce, dev_reduce_bwd);
        }
}

static cg_tensor *cpu_extremum(cg_graph *g, op_test *t)
{
    return (t->op ? cg_minn : cg_maxn)(g, t->in, t->nin);
}
static int dev_extremum(op_test *t)
{
    return (t->op ? cg_cuda_minn : cg_cuda_maxn)(t->dt, (const void *const *)t->din, t->nin,
                                                  t->out->numel, t->dout, &t->tie);
}
static int dev_extremum_bwd(op_test *t)
{
    return cg_cuda_extremum_backward(t->dt, (const void *const *)t->din, t->nin, t->out->numel,
                                     t->dout, t->dgout, t->dgin);
}

/* Integers in -2..2, so that ties are many and exact in every dtype; the
 * kernel's tie flag must match the CPU's non-differentiability note. */
static void test_extremum(cg_dtype dt)
{
    const int64_t shape[1] = {40};
    for (int op = 0; op < 2; op++)
        for (int n = 1; n <= 3; n += 2) {
            op_test t;
            cg_graph *g = test_start(&t, dt, "%s of %d", op ? "minn" : "maxn", n);
            t.op = op;
            t.nin = n;
            for (int j = 0; j < n; j++) {
                t.in[j] = param(g, dt, 1, shape, 0, 1);
                for (int64_t i = 0; i < shape[0]; i++)
                    cg_set(t.in[j], i, floor(lcg_uniform(-2, 3)));
            }
            run_test(g, &t, cpu_extremum, dev_extremum, dev_extremum_bwd);
            if ((cg_graph_nondiff(g) != NULL) != (t.tie != 0))
                failure(&t, "tie flag", t.tie ? "the kernel saw a tie, the CPU none"
                                                : "the CPU saw a tie, the kernel none");
            cg_graph_free(g);
        }
}

/* ---- the checks that need no CPU op ------------------------------------------- */

/* any_zero, and a refused call: operands that neither match nor broadcast. */
static void test_misc(cg_dtype dt)
{
    op_test t;
    cg_graph *g = test_start(&t, dt, "any_zero");
    const int64_t shape[1] = {9};
    cg_tensor *x = param(g, dt, 1, shape, 0.5, 1);
    cg_cuda_arena *A = cg_cuda_arena_new();
    void *d = A ? cg_cuda_alloc(A, 9 * cg_dtype_size(dt)) : NULL;
    int before = -1, after = -1;
    bool ok = d && cg_cuda_upload(d, x->data, 9 * cg_dtype_size(dt)) == 0 &&
              cg_cuda_any_zero(dt, d, 9, &before) == 0;
    cg_set(x, 4, 0.0);
    ok = ok && cg_cuda_upload(d, x->data, 9 * cg_dtype_size(dt)) == 0 &&
         cg_cuda_any_zero(dt, d, 9, &after) == 0;
    if (!ok || before != 0 || after != 1)
        failure(&t, "flag", ok ? "wrong answer" : cg_cuda_last_error());
    else
        g_pass++;
    const char *want = "add: operands of 3 and 2 elements do not give 3";
    if (d && (cg_cuda_binary(CG_CUDA_ADD, dt, d, 3, d, 2, d, 3) != -1 ||
              strcmp(cg_cuda_last_error(), want) != 0))
        failure(&t, "bad operands", cg_cuda_last_error());
    else
        g_pass++;
    cg_cuda_arena_free(A);
    cg_graph_free(g);
}

int main(void)
{
    int ndev = 0;
    if (cg_cuda_device_count(&ndev) != 0 || ndev == 0) {
        printf("SKIP: no CUDA device (%s)\n",
               ndev == 0 && !cg_cuda_last_error()[0] ? "cudaGetDeviceCount: 0 devices"
                                                     : cg_cuda_last_error());
        return SKIP_CODE;
    }
    static const cg_dtype dtypes[] = {CG_F32, CG_F64, CG_BF16, CG_F16};
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
        test_binary(dtypes[d]);
        test_unary(dtypes[d]);
        test_reduce(dtypes[d]);
        test_extremum(dtypes[d]);
        test_shape(dtypes[d]);
        test_matmul(dtypes[d]);
        test_misc(dtypes[d]);
    }
    cg_cuda_shutdown();
    printf("cudatest_ops: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail == 0 ? 0 : 1;
}
