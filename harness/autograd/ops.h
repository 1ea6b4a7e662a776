/* ops.h — differentiable local tensor ops (forward here, backward beside each
 * forward in its ops_*.c file).
 *
 * Every op takes its graph first, returns a new tensor owned by that graph,
 * and records a tape node when an input requires grad. On bad arguments
 * (shape mismatch, axis out of range, OOM) it returns NULL with a message in
 * cg_graph_status(g)->msg such as "shape mismatch: [2,2] vs [3]"; the caller adds
 * the source position. The output dtype is the dtype of the first tensor
 * input; mixing dtypes is an error.
 *
 * Broadcasting: binary elementwise ops broadcast as numpy does (dimensions
 * aligned from the last, each pair equal or one of them 1). One operand with
 * numel 1 goes straight to the kernel; other shapes are first expanded to the
 * common one by reshape, cat and slice (ops_elementwise.c). */
#ifndef CG_OPS_H
#define CG_OPS_H

#include "autograd.h"

/* elementwise binary (ops_elementwise.c) */
cg_tensor *cg_add(cg_graph *g, cg_tensor *a, cg_tensor *b);
cg_tensor *cg_sub(cg_graph *g, cg_tensor *a, cg_tensor *b);
cg_tensor *cg_mul(cg_graph *g, cg_tensor *a, cg_tensor *b);
cg_tensor *cg_div(cg_graph *g, cg_tensor *a, cg_tensor *b);
cg_tensor *cg_pow(cg_graph *g, cg_tensor *a, cg_tensor *b); /* a^b, both differentiable; d/db uses log(a), 0 where a==0 */
/* elementwise unary (ops_elementwise.c) */
cg_tensor *cg_neg(cg_graph *g, cg_tensor *a);
cg_tensor *cg_exp(cg_graph *g, cg_tensor *a);
cg_tensor *cg_log(cg_graph *g, cg_tensor *a);
cg_tensor *cg_tanh(cg_graph *g, cg_tensor *a);
cg_tensor *cg_relu(cg_graph *g, cg_tensor *a);   /* grad 0 at 0; notes nondiff at exactly 0 */
cg_tensor *cg_abs(cg_graph *g, cg_tensor *a);    /* grad 0 at 0 (sign); notes nondiff at 0 */
cg_tensor *cg_gelu(cg_graph *g, cg_tensor *a);   /* a * Phi(a), the exact (erf) form, torch's default */

/* reductions (ops_reduce.c). axis < 0 means over all elements -> scalar
 * (ndim 0); otherwise that axis is removed. */
cg_tensor *cg_sum(cg_graph *g, cg_tensor *a, int axis);
cg_tensor *cg_mean(cg_graph *g, cg_tensor *a, int axis);
cg_tensor *cg_logsumexp(cg_graph *g, cg_tensor *a, int axis); /* stable (max-shifted) */
cg_tensor *cg_log_softmax(cg_graph *g, cg_tensor *a, int axis); /* same shape as a */

/* elementwise over n same-shape tensors (ops_reduce.c): y = max/min of
 * xs[0..n-1] per element; the gradient is shared evenly between tied inputs
 * (like torch.amax), and ties are noted as a non-differentiable point. */
cg_tensor *cg_maxn(cg_graph *g, cg_tensor *const *xs, int n);
cg_tensor *cg_minn(cg_graph *g, cg_tensor *const *xs, int n);

/* linear algebra and shape (ops_shape.c, ops_cat.c, ops_matmul.c) */
cg_tensor *cg_matmul(cg_graph *g, cg_tensor *a, cg_tensor *b); /* [m,k]@[k,n]; 1-D operands as in numpy */
cg_tensor *cg_transpose(cg_graph *g, cg_tensor *a);             /* swaps the last two axes; 1-D unchanged */
cg_tensor *cg_reshape(cg_graph *g, cg_tensor *a, int ndim, const int64_t *shape); /* one dim may be -1 */
cg_tensor *cg_cat(cg_graph *g, cg_tensor *const *xs, int n, int axis); /* n >= 1; numel-0 inputs allowed */
/* a[start:stop] along axis (stop exclusive, clamped like Python, negatives from the end). */
cg_tensor *cg_slice(cg_graph *g, cg_tensor *a, int axis, int64_t start, int64_t stop);
/* a[i] along axis 0: removes axis 0 (negative i from the end). */
cg_tensor *cg_index(cg_graph *g, cg_tensor *a, int64_t i);
/* Products of t's dims before and after axis: t seen as [outer, len, inner]. */
void cg_outer_inner(const cg_tensor *t, int axis, int64_t *outer, int64_t *inner);
/* 0 when 0 <= axis < a->ndim; else -1 with the graph's error. */
int cg_check_axis(cg_graph *g, const cg_tensor *a, int axis);
cg_tensor *cg_clone(cg_graph *g, cg_tensor *a);  /* identity with its own node */
cg_tensor *cg_detach(cg_graph *g, cg_tensor *a); /* copy without history, requires_grad false */

/* the ops of real losses, built from the ones above (ops_loss.c); a NULL
 * input is passed on as NULL */
cg_tensor *cg_sqrt(cg_graph *g, cg_tensor *a);            /* elementwise, a^0.5 */
cg_tensor *cg_norm(cg_graph *g, cg_tensor *a);            /* 2-norm of all elements -> scalar */
cg_tensor *cg_softmax(cg_graph *g, cg_tensor *a, int axis); /* exp(log_softmax(a, axis)) */
/* [B, classes] of dtype dt, where g's tensors live: 1 at [b, labels[b]], 0
 * elsewhere; labels 1-D, whole numbers in 0..classes-1 (else NULL with the
 * graph's error). */
cg_tensor *cg_one_hot(cg_graph *g, const cg_tensor *labels, int64_t classes, cg_dtype dt);
/* mean_b -log_softmax(logits, 1)[b, labels[b]]: logits [B, C], labels [B] */
cg_tensor *cg_cross_entropy(cg_graph *g, cg_tensor *logits, const cg_tensor *labels);

#endif
