/* cudatest_harness.c — see cudatest_harness.h. */
#include "cudatest_harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int g_pass, g_fail;
static uint64_t lcg_state = 0x9e3779b97f4a7c15ULL;

/* Knuth's MMIX LCG; the top 53 bits give a uniform double in [lo, hi). */
double lcg_uniform(double lo, double hi)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(lcg_state >> 11) * 0x1p-53;
}

/* The tool's tolerances by dtype (docs/running.md), indexed by cg_dtype. */
static const double tol_rel[] = {1e-5, 1e-9, 1.6e-2, 2e-3};
static const double tol_abs[] = {1e-5, 1e-12, 1e-2, 1e-3};

static size_t bytes_of(const cg_tensor *x) { return (size_t)x->numel * cg_dtype_size(x->dtype); }

void failure(const op_test *t, const char *what, const char *why)
{
    g_fail++;
    printf("FAIL: %s %s %s: %s\n", t->name, cg_dtype_name(t->dt), what, why);
}

/* want (the CPU's) against as many elements downloaded from dev, within
 * the tolerance of the dtype; nan matches nan. */
static void compare(const op_test *t, const char *what, const cg_tensor *want, const void *dev)
{
    cg_tensor got = *want;
    got.data = malloc(bytes_of(want) + 1);
    char why[200] = "";
    if (!got.data || cg_cuda_download(got.data, dev, bytes_of(want)) != 0)
        snprintf(why, sizeof why, "download: %s", cg_cuda_last_error());
    for (int64_t i = 0; !why[0] && i < want->numel; i++) {
        double w = cg_get(want, i), d = cg_get(&got, i);
        bool close = fabs(d - w) <= tol_abs[t->dt] + tol_rel[t->dt] * fabs(w);
        if (!close && !(isnan(w) && isnan(d)))
            snprintf(why, sizeof why, "element %lld: device %.17g, cpu %.17g", (long long)i, d, w);
    }
    free(got.data);
    if (why[0])
        failure(t, what, why);
    else
        g_pass++;
}

/* A device copy of x; NULL on failure. */
static void *upload(cg_cuda_arena *A, const cg_tensor *x)
{
    void *d = cg_cuda_alloc(A, bytes_of(x));
    return d && cg_cuda_upload(d, x->data, bytes_of(x)) == 0 ? d : NULL;
}

static cg_tensor *random_like(cg_graph *g, const cg_tensor *x, double lo, double hi)
{
    cg_tensor *r = cg_tensor_like(g, x);
    for (int64_t i = 0; r && i < r->numel; i++)
        cg_set(r, i, lcg_uniform(lo, hi));
    return r;
}

/* Forward, then backward with preset gradients, on both sides. */
void run_test(cg_graph *g, op_test *t, cpu_fn cpu, dev_fn fwd, dev_fn bwd)
{
    cg_cuda_arena *A = cg_cuda_arena_new();
    t->out = cpu(g, t);
    if (!A || !t->out || !t->out->node) {
        failure(t, "setup", t->out ? "no tape node or no arena" : cg_graph_status(g)->msg);
        cg_cuda_arena_free(A);
        return;
    }
    bool ok = (t->dout = cg_cuda_alloc(A, bytes_of(t->out))) != NULL;
    for (int k = 0; ok && k < t->nin; k++)
        ok = (t->din[k] = upload(A, t->in[k])) != NULL;
    if (!ok || fwd(t) != 0) {
        failure(t, "forward", cg_cuda_last_error());
        cg_cuda_arena_free(A);
        return;
    }
    compare(t, "forward", t->out, t->dout);
    cg_tensor *w = random_like(g, t->out, -1.0, 1.0);
    ok = w && (t->dgout = upload(A, w)) != NULL;
    for (int k = 0; ok && k < t->nin; k++) {
        t->in[k]->pgrad = random_like(g, t->in[k], -1.0, 1.0);
        ok = t->in[k]->pgrad && (t->dgin[k] = upload(A, t->in[k]->pgrad)) != NULL;
    }
    t->out->pgrad = w;
    if (!ok)
        failure(t, "backward", cg_cuda_last_error()[0] ? cg_cuda_last_error() : "out of memory");
    else if (t->out->node->backward(g, t->out->node) != 0)
        failure(t, "backward on the CPU", cg_graph_status(g)->msg);
    else if (bwd(t) != 0)
        failure(t, "backward", cg_cuda_last_error());
    else
        for (int k = 0; k < t->nin; k++)
            compare(t, "backward", t->in[k]->pgrad, t->dgin[k]);
    cg_cuda_arena_free(A);
}

/* A random param of dtype dt. */
cg_tensor *param(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape, double lo, double hi)
{
    cg_tensor *x = cg_tensor_new(g, dt, ndim, shape);
    for (int64_t i = 0; x && i < x->numel; i++)
        cg_set(x, i, lcg_uniform(lo, hi));
    if (x)
        x->requires_grad = x->is_leaf = true;
    return x;
}

cg_graph *test_start(op_test *t, cg_dtype dt, const char *fmt, ...)
{
    memset(t, 0, sizeof *t);
    t->dt = dt;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    cg_graph *g = cg_graph_new();
    if (!g) {
        fprintf(stderr, "cudatest: out of memory\n");
        exit(1);
    }
    return g;
}

void test_run(cg_graph *g, op_test *t, cpu_fn cpu, dev_fn fwd, dev_fn bwd)
{
    run_test(g, t, cpu, fwd, bwd);
    cg_graph_free(g);
}
