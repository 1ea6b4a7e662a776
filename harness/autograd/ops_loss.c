/* ops_loss.c — the ops real losses are written with (ops.h): sqrt, norm,
 * softmax and cross_entropy. Each is built from the differentiable
 * primitives, so its backward is theirs, recorded on the tape as they run,
 * and it works wherever they do; only the labels of cross_entropy are read
 * on the host (they pick entries, they are not differentiated: one download
 * and one upload of a [B, C] constant on the device).
 *
 * PyTorch's definitions: sqrt(x) elementwise; norm(x) the 2-norm of all the
 * elements; softmax(x, axis) = exp(x) / sum(exp(x), axis), computed as
 * exp(log_softmax(x, axis)) so a large input does not overflow;
 * cross_entropy(logits [B, C], labels [B]) = mean_b -log_softmax(logits)[b,
 * labels[b]] (reduction 'mean', integer class labels). */
#include <math.h>
#include <stdio.h>

#include "ops.h"

/* The primitives take no NULL input: each step is checked before the next. */

cg_tensor *cg_sqrt(cg_graph *g, cg_tensor *a)
{
    cg_tensor *half = a ? cg_scalar(g, a->dtype, 0.5) : NULL;
    return half ? cg_pow(g, a, half) : NULL;
}

cg_tensor *cg_norm(cg_graph *g, cg_tensor *a)
{
    if (a && a->numel > 0 && !a->on_device) { /* sqrt's derivative at 0 is not defined */
        bool zero = true;
        for (int64_t i = 0; i < a->numel && zero; i++)
            zero = cg_get(a, i) == 0.0;
        if (zero)
            cg_note_nondiff(g, "norm at 0");
    }
    cg_tensor *sq = a ? cg_mul(g, a, a) : NULL;
    cg_tensor *s = sq ? cg_sum(g, sq, -1) : NULL;
    return s ? cg_sqrt(g, s) : NULL;
}

cg_tensor *cg_softmax(cg_graph *g, cg_tensor *a, int axis)
{
    cg_tensor *l = a ? cg_log_softmax(g, a, axis) : NULL;
    return l ? cg_exp(g, l) : NULL;
}

cg_tensor *cg_one_hot(cg_graph *g, const cg_tensor *labels, int64_t classes, cg_dtype dt)
{
    if (labels->ndim != 1) {
        cg_error(cg_graph_status(g), "expected 1-D class labels, got %d dimensions", labels->ndim);
        return NULL;
    }
    /* built on the host (labels are few: one per row), then placed where g's tensors live */
    const cg_tensor *l = cg_tensor_host(g, labels);
    int64_t shape[2] = {labels->numel, classes};
    cg_tensor *h = l ? cg_tensor_new_host(g, dt, 2, shape) : NULL;
    for (int64_t b = 0; h && b < l->numel; b++) {
        double v = cg_get(l, b);
        if (!(v >= 0 && v < (double)classes && v == floor(v))) {
            cg_error(cg_graph_status(g), "expected class labels in 0..%lld, got %g at %lld",
                     (long long)classes - 1, v, (long long)b);
            return NULL;
        }
        cg_set(h, b * classes + (int64_t)v, 1.0);
    }
    return h ? cg_tensor_place(g, h) : NULL;
}

cg_tensor *cg_cross_entropy(cg_graph *g, cg_tensor *logits, const cg_tensor *labels)
{
    if (!logits || !labels)
        return NULL;
    if (logits->ndim != 2 || labels->ndim != 1 || labels->numel != logits->shape[0]) {
        cg_error(cg_graph_status(g), "expected logits [B, C] and labels [B], got %d-D logits and %lld labels",
                 logits->ndim, (long long)labels->numel);
        return NULL;
    }
    cg_tensor *pick = cg_one_hot(g, labels, logits->shape[1], logits->dtype);
    if (!pick)
        return NULL;
    /* -sum_c onehot[b, c] * log_softmax(logits)[b, c], the mean over b */
    cg_tensor *l = cg_log_softmax(g, logits, 1);
    cg_tensor *picked = l ? cg_mul(g, pick, l) : NULL;
    cg_tensor *row = picked ? cg_sum(g, picked, 1) : NULL;
    cg_tensor *mean = row ? cg_mean(g, row, -1) : NULL;
    return mean ? cg_neg(g, mean) : NULL;
}
