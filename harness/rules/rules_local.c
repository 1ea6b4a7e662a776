/* rules_local.c — the host loops of rules_local.h, each handing over to its
 * kernel twin when the call's tensors live on the GPU. */
#include "rules_local.h"

#include <string.h>

#include "cuda_ops.h"
#include "rules_local_math.h"

static bool on_device(const cg_rule_call *call)
{
    return call->gx->on_device;
}

cg_graph *cg_local_scratch(cg_rule_call *call)
{
    cg_graph *s = cg_graph_new();
    if (!s) {
        cg_error_infra(call->st, "out of memory");
        return NULL;
    }
    if (on_device(call) && cg_graph_use_cuda(s) < 0) {
        cg_error(call->st, "%s", cg_graph_status(s)->msg);
        cg_graph_free(s);
        return NULL;
    }
    return s;
}

void *cg_local_buffer(cg_rule_call *call, cg_graph *scratch, size_t bytes)
{
    void *p = cg_alloc_data(scratch, bytes);
    if (!p)
        cg_error(call->st, "%s", cg_graph_status(scratch)->msg);
    return p;
}

int cg_local_copy(cg_rule_call *call, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (on_device(call))
        return cg_cuda_copy(dst, src, bytes) < 0 ? cg_error_cuda(call->st) : 0;
    memcpy(dst, src, bytes);
    return 0;
}

int cg_local_mul(cg_rule_call *call, cg_tensor *t, double v)
{
    return cg_tensor_scale_by(t, v, false) < 0 ? cg_error_cuda(call->st) : 0;
}

int cg_local_div(cg_rule_call *call, cg_tensor *t, double v)
{
    return cg_tensor_scale_by(t, v, true) < 0 ? cg_error_cuda(call->st) : 0;
}

int cg_local_prod_split(cg_rule_call *call, const cg_tensor *x, cg_tensor *zeros,
                        cg_tensor *nonzero)
{
    if (x->on_device)
        return cg_cuda_prod_split(x->dtype, x->data, x->numel, zeros->data, nonzero->data) < 0
                   ? cg_error_cuda(call->st)
                   : 0;
    for (int64_t e = 0; e < x->numel; e++) {
        double v = cg_get(x, e);
        cg_set(zeros, e, v == 0.0 ? 1.0 : 0.0);
        cg_set(nonzero, e, v == 0.0 ? 1.0 : v);
    }
    return 0;
}

int cg_local_prod_scale(cg_rule_call *call, const cg_tensor *x, const cg_tensor *zeros,
                        const cg_tensor *nonzero, cg_tensor *gx)
{
    if (x->on_device)
        return cg_cuda_prod_scale(x->dtype, x->data, zeros->data, nonzero->data, gx->data,
                                  x->numel) < 0
                   ? cg_error_cuda(call->st)
                   : 0;
    for (int64_t e = 0; e < x->numel; e++) {
        double others = cg_prod_of_others(cg_get(x, e), cg_get(zeros, e), cg_get(nonzero, e));
        cg_set(gx, e, cg_get(gx, e) * others);
    }
    return 0;
}

int cg_local_equal_mask(cg_rule_call *call, const cg_tensor *x, const cg_tensor *m,
                        cg_tensor *mask)
{
    if (x->on_device)
        return cg_cuda_equal_mask(x->dtype, x->data, m->data, x->numel, mask->data) < 0
                   ? cg_error_cuda(call->st)
                   : 0;
    for (int64_t e = 0; e < x->numel; e++)
        cg_set(mask, e, cg_get(x, e) == cg_get(m, e) ? 1.0 : 0.0);
    return 0;
}

int cg_local_tie_scale(cg_rule_call *call, const cg_tensor *x, const cg_tensor *m,
                       const cg_tensor *ties, cg_tensor *gx)
{
    if (x->on_device)
        return cg_cuda_tie_scale(x->dtype, x->data, m->data, ties->data, gx->data, x->numel) < 0
                   ? cg_error_cuda(call->st)
                   : 0;
    for (int64_t e = 0; e < x->numel; e++) {
        double share = cg_tie_share(cg_get(x, e), cg_get(m, e), cg_get(ties, e));
        cg_set(gx, e, cg_get(gx, e) * share);
    }
    return 0;
}

int cg_local_xla_grad(cg_rule_call *call, bool prod, const cg_tensor *gy, const cg_tensor *x,
                      const cg_tensor *y, cg_tensor *gx)
{
    if (x->on_device)
        return cg_cuda_xla_grad(x->dtype, prod, gy->data, x->data, y->data, gx->data, x->numel) < 0
                   ? cg_error_cuda(call->st)
                   : 0;
    for (int64_t e = 0; e < x->numel; e++) {
        double g = cg_get(gy, e), in = cg_get(x, e), out = cg_get(y, e);
        cg_set(gx, e, prod ? cg_xla_prod_grad(g, in, out) : cg_xla_extremum_grad(g, in, out));
    }
    return 0;
}
