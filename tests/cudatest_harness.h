/* cudatest_harness.h — the runner of tests/cudatest_ops.c: one op, CPU
 * against CUDA, forward and backward.
 *
 * For each op and dtype the test makes random inputs (a fixed LCG), runs the
 * CPU op on host tensors (ops.h) and the kernel on device copies; the outputs
 * must agree within the tool's tolerances by dtype (docs/running.md). Then the
 * backward: a random upstream gradient, and every input's gradient preset to
 * random values on both sides, so the test also proves that the kernels
 * accumulate (g += ...) rather than overwrite. The CPU side runs the op's own
 * tape node (out->node->backward), nothing else of autograd. */
#ifndef CUDATEST_HARNESS_H
#define CUDATEST_HARNESS_H

#include "cuda_ops.h"
#include "ops.h"

#define MAX_IN 4

extern int g_pass, g_fail;

/* One op under test: its host inputs and their device twins. */
typedef struct op_test {
    char name[96];
    cg_dtype dt;
    int op, nin;
    int64_t arg[4];            /* axis, start, index, ... as the op needs */
    cg_tensor *in[MAX_IN];     /* params, so the CPU op records its node */
    void *din[MAX_IN], *dgin[MAX_IN];
    cg_tensor *out;            /* the CPU forward's result */
    void *dout, *dgout;        /* the device output; the upstream gradient */
    int tie;                   /* maxn/minn: what the kernel reported */
} op_test;

/* The CPU forward (from t->in), and the device forward (into t->dout) or
 * backward (into t->dgin); the device ones return 0 or -1. */
typedef cg_tensor *(*cpu_fn)(cg_graph *g, op_test *t);
typedef int (*dev_fn)(op_test *t);

double lcg_uniform(double lo, double hi);
/* A random param of dtype dt in g, values in [lo, hi). */
cg_tensor *param(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape, double lo, double hi);
/* Counts a failure and prints "FAIL: <name> <dtype> <what>: <why>". */
void failure(const op_test *t, const char *what, const char *why);
/* Forward, compare, backward, compare; t->in[] were made in g. */
void run_test(cg_graph *g, op_test *t, cpu_fn cpu, dev_fn fwd, dev_fn bwd);
/* A cleared test named by fmt, and a fresh graph for it (ties and kinks
 * noted by one op must not leak into the next); exits when out of memory. */
cg_graph *test_start(op_test *t, cg_dtype dt, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* run_test, then frees g. */
void test_run(cg_graph *g, op_test *t, cpu_fn cpu, dev_fn fwd, dev_fn bwd);

/* cudatest_shape.c: transpose, cat, slice, index, reshape, clone; matmul. */
void test_shape(cg_dtype dt);
void test_matmul(cg_dtype dt);

#endif
