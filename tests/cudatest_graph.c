/* cudatest_graph.c — the ops as a case program uses them, on a CUDA graph
 * against a host graph: same inputs, same op through ops.h, then a backward
 * through autograd; the forward value and every input's gradient must agree
 * within the tool's tolerance for the dtype (cg_tol_for).
 *
 * cudatest_ops checks each kernel against its CPU loop at the kernel's own
 * API; this checks what sits above it: that every op on a CUDA graph reaches
 * its kernel with the right views (axis, widths, bounds, matrix sizes), that
 * gradients are accumulated, seeded and folded on the device, and that
 * nothing reads device memory on the host (in the emulated build, tests/
 * cuda_emu, such a read is a crash). Each case also runs a second backward,
 * so .grad accumulates across passes as PyTorch's does.
 *
 * Without a CUDA device it prints "SKIP: ..." and exits 77 (ctest: skipped). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_ops.h"
#include "ops.h"
#include "result.h"

#define SKIP_CODE 77
#define MAX_IN 4

static int g_pass, g_fail;
static uint64_t lcg_state = 0x2545F4914F6CDD1DULL;

static double uniform(double lo, double hi)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(lcg_state >> 11) / 9007199254740992.0;
}

/* One program: n inputs of the given shapes, values in [lo, hi), and the op
 * applied to them in whichever graph. */
typedef struct prog {
    const char *name;
    int nin;
    int ndim[MAX_IN];
    int64_t shape[MAX_IN][4];
    double lo, hi;
    cg_tensor *(*apply)(cg_graph *g, cg_tensor **in);
} prog;

/* ---- the programs ------------------------------------------------------------- */

static cg_tensor *p_add(cg_graph *g, cg_tensor **x) { return cg_add(g, x[0], x[1]); }
static cg_tensor *p_sub_bcast(cg_graph *g, cg_tensor **x) { return cg_sub(g, x[0], x[1]); }
static cg_tensor *p_mul(cg_graph *g, cg_tensor **x) { return cg_mul(g, x[0], x[1]); }
static cg_tensor *p_div(cg_graph *g, cg_tensor **x) { return cg_div(g, x[0], x[1]); }
static cg_tensor *p_pow(cg_graph *g, cg_tensor **x) { return cg_pow(g, x[0], x[1]); }
static cg_tensor *p_neg(cg_graph *g, cg_tensor **x) { return cg_neg(g, x[0]); }
static cg_tensor *p_exp(cg_graph *g, cg_tensor **x) { return cg_exp(g, x[0]); }
static cg_tensor *p_log(cg_graph *g, cg_tensor **x) { return cg_log(g, x[0]); }
static cg_tensor *p_tanh(cg_graph *g, cg_tensor **x) { return cg_tanh(g, x[0]); }
static cg_tensor *p_relu(cg_graph *g, cg_tensor **x) { return cg_relu(g, x[0]); }
static cg_tensor *p_abs(cg_graph *g, cg_tensor **x) { return cg_abs(g, x[0]); }
static cg_tensor *p_sum_all(cg_graph *g, cg_tensor **x) { return cg_sum(g, x[0], -1); }
static cg_tensor *p_sum_1(cg_graph *g, cg_tensor **x) { return cg_sum(g, x[0], 1); }
static cg_tensor *p_mean_0(cg_graph *g, cg_tensor **x) { return cg_mean(g, x[0], 0); }
static cg_tensor *p_lse_1(cg_graph *g, cg_tensor **x) { return cg_logsumexp(g, x[0], 1); }
static cg_tensor *p_lsm_0(cg_graph *g, cg_tensor **x) { return cg_log_softmax(g, x[0], 0); }
static cg_tensor *p_lsm_2(cg_graph *g, cg_tensor **x) { return cg_log_softmax(g, x[0], 2); }
static cg_tensor *p_maxn(cg_graph *g, cg_tensor **x) { return cg_maxn(g, x, 3); }
static cg_tensor *p_minn(cg_graph *g, cg_tensor **x) { return cg_minn(g, x, 2); }
static cg_tensor *p_matmul(cg_graph *g, cg_tensor **x) { return cg_matmul(g, x[0], x[1]); }
static cg_tensor *p_transpose(cg_graph *g, cg_tensor **x) { return cg_transpose(g, x[0]); }
static cg_tensor *p_cat_1(cg_graph *g, cg_tensor **x) { return cg_cat(g, x, 3, 1); }
static cg_tensor *p_slice(cg_graph *g, cg_tensor **x) { return cg_slice(g, x[0], 1, 1, -1); }
static cg_tensor *p_index(cg_graph *g, cg_tensor **x) { return cg_index(g, x[0], -2); }
static cg_tensor *p_clone(cg_graph *g, cg_tensor **x) { return cg_clone(g, x[0]); }
static cg_tensor *p_reshape(cg_graph *g, cg_tensor **x)
{
    const int64_t shape[2] = {-1, 6};
    return cg_reshape(g, x[0], 2, shape);
}
/* A small model: log_softmax(tanh(x @ w) * 2 - b) summed over rows (b has
 * the product's shape: only numel-1 operands broadcast). */
static cg_tensor *p_chain(cg_graph *g, cg_tensor **x)
{
    cg_tensor *h = cg_tanh(g, cg_matmul(g, x[0], x[1]));
    cg_tensor *two = h ? cg_scalar(g, h->dtype, 2.0) : NULL;
    cg_tensor *z = two ? cg_sub(g, cg_mul(g, h, two), x[2]) : NULL;
    return z ? cg_sum(g, cg_log_softmax(g, z, 1), 0) : NULL;
}

#define SHAPES(...) {__VA_ARGS__}
static const prog progs[] = {
    {"add", 2, {2, 2}, SHAPES({3, 5}, {3, 5}), -2, 2, p_add},
    {"sub broadcast", 2, {2, 0}, SHAPES({3, 5}, {0}), -2, 2, p_sub_bcast},
    {"mul", 2, {1, 1}, SHAPES({7}, {7}), -2, 2, p_mul},
    {"div", 2, {2, 2}, SHAPES({2, 3}, {2, 3}), 0.5, 2, p_div},
    {"pow", 2, {1, 1}, SHAPES({6}, {6}), 0.5, 2, p_pow},
    {"neg", 1, {2}, SHAPES({4, 5}), -2, 2, p_neg},
    {"exp", 1, {2}, SHAPES({4, 5}), -2, 2, p_exp},
    {"log", 1, {2}, SHAPES({4, 5}), 0.1, 3, p_log},
    {"tanh", 1, {2}, SHAPES({4, 5}), -2, 2, p_tanh},
    {"relu", 1, {2}, SHAPES({4, 5}), -2, 2, p_relu},
    {"abs", 1, {2}, SHAPES({4, 5}), -2, 2, p_abs},
    {"sum all", 1, {3}, SHAPES({2, 3, 4}), -2, 2, p_sum_all},
    {"sum axis 1", 1, {3}, SHAPES({2, 3, 4}), -2, 2, p_sum_1},
    {"mean axis 0", 1, {2}, SHAPES({5, 3}), -2, 2, p_mean_0},
    {"logsumexp axis 1", 1, {3}, SHAPES({2, 6, 3}), -4, 4, p_lse_1},
    {"log_softmax axis 0", 1, {2}, SHAPES({5, 4}), -4, 4, p_lsm_0},
    {"log_softmax axis 2", 1, {3}, SHAPES({2, 3, 7}), -4, 4, p_lsm_2},
    {"maxn of 3", 3, {2, 2, 2}, SHAPES({3, 4}, {3, 4}, {3, 4}), -2, 2, p_maxn},
    {"minn of 2", 2, {1, 1}, SHAPES({9}, {9}), -2, 2, p_minn},
    {"matmul 2-D", 2, {2, 2}, SHAPES({3, 4}, {4, 5}), -1, 1, p_matmul},
    {"matmul 1-D @ 2-D", 2, {1, 2}, SHAPES({4}, {4, 3}), -1, 1, p_matmul},
    {"matmul 2-D @ 1-D", 2, {2, 1}, SHAPES({3, 4}, {4}), -1, 1, p_matmul},
    {"matmul 1-D @ 1-D", 2, {1, 1}, SHAPES({6}, {6}), -1, 1, p_matmul},
    {"transpose 3-D", 1, {3}, SHAPES({2, 3, 4}), -2, 2, p_transpose},
    {"transpose 1-D", 1, {1}, SHAPES({5}), -2, 2, p_transpose},
    {"cat axis 1", 3, {2, 2, 2}, SHAPES({2, 1}, {2, 3}, {2, 2}), -2, 2, p_cat_1},
    {"slice axis 1", 1, {3}, SHAPES({2, 5, 3}), -2, 2, p_slice},
    {"index -2", 1, {3}, SHAPES({4, 2, 3}), -2, 2, p_index},
    {"clone", 1, {2}, SHAPES({3, 3}), -2, 2, p_clone},
    {"reshape", 1, {3}, SHAPES({2, 3, 2}), -2, 2, p_reshape},
    {"tanh(x @ w) * 2 - b -> log_softmax", 3, {2, 2, 2}, SHAPES({4, 3}, {3, 5}, {4, 5}), -1, 1,
     p_chain},
};

/* ---- one program on both sides ----------------------------------------------- */

static void fail(const char *name, cg_dtype dt, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(const char *name, cg_dtype dt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: %s (%s): ", name, cg_dtype_name(dt));
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    g_fail++;
}

/* want (host) against got (either side, read back through g); one failure
 * per tensor, naming the first bad element. */
static void compare(cg_graph *g, const char *name, cg_dtype dt, const char *what,
                    const cg_tensor *want, const cg_tensor *got)
{
    if (!want || !got) {
        if (want || got)
            fail(name, dt, "%s: present on one side only", what);
        else
            g_pass++;
        return;
    }
    const cg_tensor *h = cg_tensor_host(g, got);
    if (!h || h->numel != want->numel) {
        fail(name, dt, "%s: %s", what, h ? "element counts differ" : cg_graph_status(g)->msg);
        return;
    }
    cg_tol tol = cg_tol_for(dt);
    for (int64_t i = 0; i < want->numel; i++) {
        double w = cg_get(want, i), d = cg_get(h, i);
        bool close = fabs(d - w) <= tol.atol + tol.rtol * fabs(w) || (isnan(w) && isnan(d));
        if (!close) {
            fail(name, dt, "%s[%lld]: host %.17g, device %.17g", what, (long long)i, w, d);
            return;
        }
    }
    g_pass++;
}

/* The inputs, the op, loss = sum(out * weight) and two backward passes in
 * g; host values come from vals (the same numbers on both sides). */
static cg_tensor *run_side(cg_graph *g, const prog *p, cg_dtype dt, cg_tensor *const *vals,
                           const cg_tensor *weight, cg_tensor **in)
{
    for (int k = 0; k < p->nin; k++) {
        cg_tensor *h = cg_tensor_new_host(g, dt, p->ndim[k], p->shape[k]);
        if (!h)
            return NULL;
        memcpy(h->data, vals[k]->data, (size_t)h->numel * cg_dtype_size(dt));
        if (!(in[k] = cg_tensor_place(g, h)))
            return NULL;
        in[k]->requires_grad = in[k]->is_leaf = true;
    }
    cg_tensor *out = p->apply(g, in);
    cg_tensor *wh = out ? cg_tensor_new_host(g, dt, out->ndim, out->shape) : NULL;
    if (!wh)
        return NULL;
    memcpy(wh->data, weight->data, (size_t)wh->numel * cg_dtype_size(dt));
    cg_tensor *w = cg_tensor_place(g, wh);
    cg_tensor *loss = w ? cg_sum(g, cg_mul(g, out, w), -1) : NULL;
    if (!loss || cg_backward(g, &loss, 1) != 0 || cg_backward(g, &loss, 1) != 0)
        return NULL;
    return out;
}

static void run_prog(const prog *p, cg_dtype dt)
{
    cg_graph *host = cg_graph_new(), *dev = cg_graph_new();
    if (!host || !dev || cg_graph_use_cuda(dev) != 0) {
        fail(p->name, dt, "setup: %s", dev ? cg_graph_status(dev)->msg : "out of memory");
        cg_graph_free(host);
        cg_graph_free(dev);
        return;
    }
    cg_tensor *vals[MAX_IN], *hin[MAX_IN], *din[MAX_IN];
    for (int k = 0; k < p->nin; k++) {
        vals[k] = cg_tensor_new_host(host, dt, p->ndim[k], p->shape[k]);
        for (int64_t i = 0; vals[k] && i < vals[k]->numel; i++)
            cg_set(vals[k], i, uniform(p->lo, p->hi));
    }
    /* the weight's shape is the output's: run the host side once to learn it */
    cg_tensor *probe_in[MAX_IN];
    cg_graph *probe = cg_graph_new();
    cg_tensor *shape_of = NULL;
    if (probe) {
        for (int k = 0; k < p->nin; k++)
            probe_in[k] = cg_tensor_new_host(probe, dt, p->ndim[k], p->shape[k]);
        shape_of = p->apply(probe, probe_in);
    }
    cg_tensor *weight = shape_of ? cg_tensor_new_host(host, dt, shape_of->ndim, shape_of->shape)
                                 : NULL;
    for (int64_t i = 0; weight && i < weight->numel; i++)
        cg_set(weight, i, uniform(-1, 1));
    cg_tensor *hout = weight ? run_side(host, p, dt, vals, weight, hin) : NULL;
    cg_tensor *dout = hout ? run_side(dev, p, dt, vals, weight, din) : NULL;
    if (!shape_of)
        fail(p->name, dt, "the program fails: %s",
             probe ? cg_graph_status(probe)->msg : "out of memory");
    else if (!hout)
        fail(p->name, dt, "host side: %s", cg_graph_status(host)->msg);
    else if (!dout)
        fail(p->name, dt, "device side: %s", cg_graph_status(dev)->msg);
    else {
        compare(dev, p->name, dt, "forward", hout, dout);
        for (int k = 0; k < p->nin; k++) {
            char what[32];
            snprintf(what, sizeof what, "grad of input %d", k);
            compare(dev, p->name, dt, what, hin[k]->grad, din[k]->grad);
        }
        if (!din[0]->on_device || !dout->on_device)
            fail(p->name, dt, "the device side's tensors are not on the device");
    }
    cg_graph_free(probe);
    cg_graph_free(host);
    cg_graph_free(dev);
}

int main(void)
{
    int n = 0;
    if (cg_cuda_device_count(&n) != 0 || n < 1) {
        printf("SKIP: no CUDA device (%s)\n", n < 1 ? cg_cuda_last_error() : "");
        return SKIP_CODE;
    }
    const cg_dtype dts[] = {CG_F64, CG_F32};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
            run_prog(&progs[i], dts[d]);
    printf("cudatest_graph: %d passed, %d failed\n", g_pass, g_fail);
    cg_cuda_shutdown();
    return g_fail ? 1 : 0;
}
