/* cudatest_local.c — the whole-tensor updates (tensor_math.c) and the rule
 * sets' local arithmetic (rules_local.c) on a CUDA graph against the same
 * calls on a host graph, in f64 and f32.
 *
 * Inputs hold exact zeros and ties on purpose: they select the branches of
 * rules_local_math.h (Π of the others with no zero, with this rank's zero,
 * with two zeros; a max this rank shares or does not hold), where a device
 * twin that drifted from the CPU formula would show. Without a CUDA device:
 * "SKIP: ..." and exit 77. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_ops.h"
#include "result.h"
#include "rules_local.h"

#define SKIP_CODE 77
#define N 12
#define NOUT 9

static int g_pass, g_fail;

/* x has zeros at 0 and 5; m equals x at 1, 2 and 7. */
static const double xs[N] = {0, 1.5, -2, 3, 0.25, 0, -1, 4, 2, -0.5, 1, 3};
static const double ms[N] = {1, 1.5, -2, 2, 1, 1, 1, 4, 3, 1, 2, 1};
static const double gs[N] = {0.5, -1, 2, 1, -3, 0.75, 1, -0.5, 2, 1, -1, 0.25};
static const char *const out_names[NOUT] = {
    "accumulate/scalars/copy", "cast",          "prod (own zeros only)",
    "prod (one more zero)",    "zeros",         "tie mask",
    "tie share",               "xla prod",      "xla max + copy/mul/div"};

static cg_tensor *filled(cg_graph *g, cg_dtype dt, const double *v)
{
    int64_t n = N;
    cg_tensor *h = cg_tensor_new_host(g, dt, 1, &n);
    for (int64_t i = 0; h && i < n; i++)
        cg_set(h, i, v[i]);
    return h ? cg_tensor_place(g, h) : NULL;
}

/* Every operation under test, in order, on one graph; out[] receives the
 * tensors to compare. 0, or -1 (the message in g's error or st). */
static int run_side(cg_graph *g, cg_dtype dt, cg_tensor **out, cg_status *st)
{
    int64_t n = N;
    cg_tensor *x = filled(g, dt, xs), *m = filled(g, dt, ms), *gy = filled(g, dt, gs);
    cg_tensor *a = filled(g, dt, gs), *p1 = filled(g, dt, gs), *p2 = filled(g, dt, gs);
    cg_tensor *xp = filled(g, dt, gs), *xm = filled(g, dt, gs);
    cg_tensor *z = cg_tensor_new(g, CG_F64, 1, &n), *nz = cg_tensor_new(g, CG_F64, 1, &n);
    cg_tensor *ties = cg_tensor_new(g, CG_F64, 1, &n), *share = filled(g, dt, gs);
    if (!x || !m || !gy || !a || !p1 || !p2 || !xp || !xm || !z || !nz || !ties || !share)
        return -1;
    cg_rule_call c = {.x = x, .y = m, .gy = gy, .gx = a, .st = st, .world = 3};
    /* tensor_math.c */
    if (cg_tensor_accumulate(g, a, x) || cg_tensor_add_scalar(g, a, 0.5) ||
        cg_tensor_mul_scalar(g, a, -3) || cg_tensor_div_scalar(g, a, 7) ||
        cg_tensor_copy_elems(g, a, 2, gy, 5, 4))
        return -1;
    cg_tensor *cast = cg_tensor_cast(g, a, dt == CG_F64 ? CG_F32 : CG_F64);
    if (!cast)
        return -1;
    /* rules_local.c: prod as one rank sees it, then as if one more rank held
     * a zero everywhere (the split's counts are what the all_reduce adds) */
    if (cg_local_prod_split(&c, x, z, nz) || cg_local_prod_scale(&c, x, z, nz, p1) ||
        cg_tensor_add_scalar(g, z, 1.0) || cg_local_prod_scale(&c, x, z, nz, p2))
        return -1;
    /* max: the mask, then one more tied rank wherever this one attains m */
    if (cg_local_equal_mask(&c, x, m, ties) || cg_tensor_mul_scalar(g, ties, 2.0) ||
        cg_tensor_add_scalar(g, ties, 1.0) || cg_local_tie_scale(&c, x, m, ties, share))
        return -1;
    /* torch_xla's local backward; then the plain copy, mul and div */
    if (cg_local_xla_grad(&c, true, gy, x, m, xp) || cg_local_xla_grad(&c, false, gy, x, m, xm) ||
        cg_local_copy(&c, xm->data, (const char *)gy->data + 3 * cg_dtype_size(dt),
                      2 * cg_dtype_size(dt)) ||
        cg_local_mul(&c, xm, 3.0) || cg_local_div(&c, xm, 3.0 * 7.0))
        return -1;
    cg_tensor *res[NOUT] = {a, cast, p1, p2, z, ties, share, xp, xm};
    memcpy(out, res, sizeof res);
    return 0;
}

static void run_dtype(cg_dtype dt)
{
    cg_graph *host = cg_graph_new(), *dev = cg_graph_new();
    cg_tensor *want[NOUT], *got[NOUT];
    cg_status hst = CG_STATUS_OK, dst = CG_STATUS_OK;
    int hrc = host ? run_side(host, dt, want, &hst) : -1;
    int drc = dev && cg_graph_use_cuda(dev) == 0 ? run_side(dev, dt, got, &dst) : -1;
    if (hrc || drc) {
        printf("FAIL: %s: %s\n", cg_dtype_name(dt),
               hrc ? (hst.msg[0] ? hst.msg
                      : host     ? cg_graph_status(host)->msg
                                 : "out of memory")
                   : (dst.msg[0] ? dst.msg
                      : dev      ? cg_graph_status(dev)->msg
                                 : "out of memory"));
        g_fail++;
    }
    for (int k = 0; !hrc && !drc && k < NOUT; k++) {
        const cg_tensor *h = got[k]->on_device ? cg_tensor_host(dev, got[k]) : NULL;
        cg_tol tol = cg_tol_for(want[k]->dtype);
        int64_t bad = -1;
        for (int64_t i = 0; h && bad < 0 && i < h->numel; i++) {
            double w = cg_get(want[k], i), d = cg_get(h, i);
            if (!(fabs(d - w) <= tol.atol + tol.rtol * fabs(w)))
                bad = i;
        }
        if (h && bad < 0) {
            g_pass++;
            continue;
        }
        g_fail++;
        if (!h)
            printf("FAIL: %s %s: not on the device, or not read back (%s)\n", cg_dtype_name(dt),
                   out_names[k], cg_graph_status(dev)->msg);
        else
            printf("FAIL: %s %s[%lld]: host %.17g, device %.17g\n", cg_dtype_name(dt),
                   out_names[k], (long long)bad, cg_get(want[k], bad), cg_get(h, bad));
    }
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
    run_dtype(CG_F64);
    run_dtype(CG_F32);
    printf("cudatest_local: %d passed, %d failed\n", g_pass, g_fail);
    cg_cuda_shutdown();
    return g_fail ? 1 : 0;
}
