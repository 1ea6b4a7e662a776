/* ops_elementwise.c — binary and unary elementwise ops, forward and backward.
 *
 * Each op is a value function plus its partial derivatives, handed to one
 * shared forward and one shared backward. Values and derivatives are taken in
 * double and rounded once into the output's dtype. A numel-1 operand
 * broadcasts against the other; its gradient is the sum over the output.
 * Other shapes broadcast as numpy's do: both operands are first expanded to
 * the common shape by reshape, cat and slice, whose backwards sum the
 * gradient back over the repeated axes.
 * On a CUDA graph the same scaffolding hands the op's code to its kernel
 * twin (cuda/ops_elementwise.cu) instead of running the loop. */
#include "ops.h"

#include <math.h>

#include "cuda_ops.h"

typedef double (*binary_fn)(double a, double b);
typedef double (*unary_fn)(double x);

/* Element of t that pairs with output element i (numel-1 operands broadcast). */
static int64_t operand_index(const cg_tensor *t, int64_t i)
{
    return t->numel == 1 ? 0 : i;
}

/* The operand whose shape the output takes, or NULL when the shapes neither
 * match nor one has a single element (then *error says why, NULL when
 * numpy's broadcasting may still pair them). Two numel-1 operands give the
 * one with more dimensions, as numpy does. */
static const cg_tensor *output_shape_of(cg_graph *g, const char *op, const cg_tensor *a,
                                        const cg_tensor *b, bool *dtype_error)
{
    *dtype_error = a->dtype != b->dtype;
    if (*dtype_error) {
        cg_error(cg_graph_status(g), "expected matching dtypes for %s, got %s and %s", op,
                 cg_dtype_name(a->dtype), cg_dtype_name(b->dtype));
        return NULL;
    }
    if (cg_same_shape(a, b))
        return a;
    if (a->numel == 1 && b->numel == 1)
        return a->ndim >= b->ndim ? a : b;
    if (b->numel == 1)
        return a;
    if (a->numel == 1)
        return b;
    return NULL;
}

/* ---- numpy broadcasting ---------------------------------------------------- */

/* The shape a and b broadcast to (numpy: dimensions aligned from the last,
 * each pair equal or one of them 1). false (the graph's error) when they do
 * not. */
static bool broadcast_shape(cg_graph *g, const char *op, const cg_tensor *a, const cg_tensor *b,
                            int *ndim, int64_t *shape)
{
    *ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int d = 0; d < *ndim; d++) {
        int da = d - (*ndim - a->ndim), db = d - (*ndim - b->ndim);
        int64_t x = da >= 0 ? a->shape[da] : 1, y = db >= 0 ? b->shape[db] : 1;
        if (x != y && x != 1 && y != 1) {
            char sa[64], sb[64];
            cg_error(cg_graph_status(g), "expected matching shapes for %s, got %s and %s", op,
                     cg_shape_str(a, sa, sizeof sa), cg_shape_str(b, sb, sizeof sb));
            return false;
        }
        shape[d] = x == 1 ? y : x;
    }
    return true;
}

/* t repeated along axis d to k (t's size there is 1): copies of t joined by
 * cat, doubling, then sliced to k. Built from cat and slice, so the gradient
 * of the copies is summed back into t by their backwards, on either side. */
static cg_tensor *repeat_axis(cg_graph *g, cg_tensor *t, int d, int64_t k)
{
    while (t && t->shape[d] < k)
        t = cg_cat(g, (cg_tensor *[]){t, t}, 2, d);
    return t && t->shape[d] != k ? cg_slice(g, t, d, 0, k) : t;
}

/* t broadcast to `shape` (which it broadcasts to): leading 1s by reshape,
 * then every axis of size 1 repeated. */
static cg_tensor *expand_to(cg_graph *g, cg_tensor *t, int ndim, const int64_t *shape)
{
    if (t->ndim < ndim) {
        int64_t padded[CG_MAX_DIMS];
        int lead = ndim - t->ndim;
        for (int d = 0; d < ndim; d++)
            padded[d] = d < lead ? 1 : t->shape[d - lead];
        t = cg_reshape(g, t, ndim, padded);
    }
    for (int d = 0; t && d < ndim; d++)
        if (t->shape[d] != shape[d])
            t = repeat_axis(g, t, d, shape[d]);
    return t;
}

/* ---- binary scaffolding -------------------------------------------------- */

/* out = f(a, b) elementwise with broadcasting. Fails on a dtype or shape
 * mismatch, or out of memory. */
static cg_tensor *binary_forward(cg_graph *g, const char *op, cg_tensor *a, cg_tensor *b,
                                 binary_fn f, cg_cuda_binary_op code,
                                 int (*backward)(cg_graph *, cg_node *))
{
    bool dtype_error;
    const cg_tensor *like = output_shape_of(g, op, a, b, &dtype_error);
    if (!like && !dtype_error) { /* numpy's broadcasting: both operands expanded to one shape */
        int ndim;
        int64_t shape[CG_MAX_DIMS];
        if (!broadcast_shape(g, op, a, b, &ndim, shape))
            return NULL;
        cg_tensor *ea = expand_to(g, a, ndim, shape), *eb = ea ? expand_to(g, b, ndim, shape) : NULL;
        return eb ? binary_forward(g, op, ea, eb, f, code, backward) : NULL;
    }
    cg_tensor *out = like ? cg_tensor_like(g, like) : NULL;
    cg_tensor *in[2] = {a, b};
    if (!out || cg_check_placed(g, op, out, in, 2) < 0)
        return NULL;
    if (out->on_device) {
        if (cg_cuda_binary(code, out->dtype, a->data, a->numel, b->data, b->numel, out->data,
                           out->numel) < 0)
            return cg_error_cuda(cg_graph_status(g)), NULL;
    } else {
        for (int64_t i = 0; i < out->numel; i++)
            cg_set(out, i, f(cg_get(a, operand_index(a, i)), cg_get(b, operand_index(b, i))));
    }
    if (!cg_any_requires_grad(in, 2))
        return out;
    cg_node *n = cg_record(g, op, out, in, 2, backward);
    if (!n)
        return NULL;
    n->iarg[0] = code; /* the kernel twin's code, for the backward */
    return out;
}

/* Adds dL/dt = dL/dout * df(a, b) into t, one of the node's two inputs. A
 * broadcast operand sums in double and rounds once into its gradient. */
static int push_partial(cg_graph *g, const cg_node *n, cg_tensor *t, binary_fn df)
{
    const cg_tensor *a = n->in[0], *b = n->in[1], *gout = n->out->pgrad;
    bool broadcast = t->numel == 1 && gout->numel != 1;
    double total = 0.0;
    for (int64_t i = 0; i < gout->numel; i++) {
        double d = cg_get(gout, i) *
                   df(cg_get(a, operand_index(a, i)), cg_get(b, operand_index(b, i)));
        if (broadcast)
            total += d;
        else if (cg_accum_grad_at(g, t, i, d) < 0)
            return -1;
    }
    return broadcast ? cg_accum_grad_at(g, t, 0, total) : 0;
}

/* Both partials in one kernel; a NULL slot is an input that needs none. */
static int binary_backward_device(cg_graph *g, cg_node *n, cg_cuda_binary_op code)
{
    cg_tensor *a = n->in[0], *b = n->in[1], *ga, *gb;
    const cg_tensor *gout = n->out->pgrad;
    if (cg_grad_slot(g, a, &ga) < 0 || cg_grad_slot(g, b, &gb) < 0)
        return -1;
    if (cg_cuda_binary_backward(code, gout->dtype, a->data, a->numel, b->data, b->numel,
                                gout->data, gout->numel, ga ? ga->data : NULL,
                                gb ? gb->data : NULL) < 0)
        return cg_error_cuda(cg_graph_status(g));
    return 0;
}

static int binary_backward(cg_graph *g, cg_node *n, binary_fn dfda, binary_fn dfdb)
{
    if (n->out->on_device)
        return binary_backward_device(g, n, (cg_cuda_binary_op)n->iarg[0]);
    if (n->in[0]->requires_grad && push_partial(g, n, n->in[0], dfda) < 0)
        return -1;
    if (n->in[1]->requires_grad && push_partial(g, n, n->in[1], dfdb) < 0)
        return -1;
    return 0;
}

/* ---- add, sub, mul, div, pow --------------------------------------------- */

static double one(double a, double b) { (void)a; (void)b; return 1.0; }
static double minus_one(double a, double b) { (void)a; (void)b; return -1.0; }
static double first(double a, double b) { (void)b; return a; }
static double second(double a, double b) { (void)a; return b; }

/* add: a + b. */
static double add_f(double a, double b) { return a + b; }
static int add_backward(cg_graph *g, cg_node *n) { return binary_backward(g, n, one, one); }
cg_tensor *cg_add(cg_graph *g, cg_tensor *a, cg_tensor *b)
{
    return binary_forward(g, "add", a, b, add_f, CG_CUDA_ADD, add_backward);
}

/* sub: a - b. */
static double sub_f(double a, double b) { return a - b; }
static int sub_backward(cg_graph *g, cg_node *n) { return binary_backward(g, n, one, minus_one); }
cg_tensor *cg_sub(cg_graph *g, cg_tensor *a, cg_tensor *b)
{
    return binary_forward(g, "sub", a, b, sub_f, CG_CUDA_SUB, sub_backward);
}

/* mul: a * b; d/da = b, d/db = a. */
static double mul_f(double a, double b) { return a * b; }
static int mul_backward(cg_graph *g, cg_node *n) { return binary_backward(g, n, second, first); }
cg_tensor *cg_mul(cg_graph *g, cg_tensor *a, cg_tensor *b)
{
    return binary_forward(g, "mul", a, b, mul_f, CG_CUDA_MUL, mul_backward);
}

/* div: a / b; d/da = 1/b, d/db = -a/b^2 (IEEE inf/nan at b == 0, like torch). */
static double div_f(double a, double b) { return a / b; }
static double div_da(double a, double b) { (void)a; return 1.0 / b; }
static double div_db(double a, double b) { return -a / (b * b); }
static int div_backward(cg_graph *g, cg_node *n) { return binary_backward(g, n, div_da, div_db); }
cg_tensor *cg_div(cg_graph *g, cg_tensor *a, cg_tensor *b)
{
    return binary_forward(g, "div", a, b, div_f, CG_CUDA_DIV, div_backward);
}

/* pow: a^b. d/da = b a^(b-1), taken as 0 where b == 0 so that 0^0 does not
 * give 0 * inf; d/db = a^b log(a), taken as 0 where a == 0 (torch's rule). */
static double pow_da(double a, double b) { return b == 0.0 ? 0.0 : b * pow(a, b - 1.0); }
static double pow_db(double a, double b) { return a == 0.0 ? 0.0 : pow(a, b) * log(a); }
static int pow_backward(cg_graph *g, cg_node *n) { return binary_backward(g, n, pow_da, pow_db); }
cg_tensor *cg_pow(cg_graph *g, cg_tensor *a, cg_tensor *b)
{
    return binary_forward(g, "pow", a, b, pow, CG_CUDA_POW, pow_backward);
}

/* ---- unary scaffolding --------------------------------------------------- */

/* out = f(a) elementwise; fails only out of memory. */
static cg_tensor *unary_forward(cg_graph *g, const char *op, cg_tensor *a, unary_fn f,
                                cg_cuda_unary_op code, int (*backward)(cg_graph *, cg_node *))
{
    cg_tensor *out = cg_tensor_like(g, a);
    if (!out || cg_check_placed(g, op, out, &a, 1) < 0)
        return NULL;
    if (out->on_device) {
        if (cg_cuda_unary(code, a->dtype, a->data, out->data, a->numel) < 0)
            return cg_error_cuda(cg_graph_status(g)), NULL;
    } else {
        for (int64_t i = 0; i < a->numel; i++)
            cg_set(out, i, f(cg_get(a, i)));
    }
    if (!a->requires_grad)
        return out;
    cg_node *n = cg_record(g, op, out, &a, 1, backward);
    if (!n)
        return NULL;
    n->iarg[0] = code;
    return out;
}

/* dL/da = dL/dout * f'(a). */
static int unary_backward(cg_graph *g, cg_node *n, unary_fn dfdx)
{
    cg_tensor *a = n->in[0];
    const cg_tensor *gout = n->out->pgrad;
    if (a->on_device) {
        cg_tensor *ga;
        if (cg_grad_slot(g, a, &ga) < 0)
            return -1;
        if (ga && cg_cuda_unary_backward((cg_cuda_unary_op)n->iarg[0], a->dtype, a->data,
                                         gout->data, ga->data, a->numel) < 0)
            return cg_error_cuda(cg_graph_status(g));
        return 0;
    }
    for (int64_t i = 0; i < a->numel; i++)
        if (cg_accum_grad_at(g, a, i, cg_get(gout, i) * dfdx(cg_get(a, i))) < 0)
            return -1;
    return 0;
}

/* relu and abs have a kink at 0: the finite-difference check must skip it. */
static void note_zeros(cg_graph *g, const cg_tensor *a, const char *reason)
{
    if (a->on_device) { /* one flag comes back, not the tensor */
        int found = 0;
        if (cg_cuda_any_zero(a->dtype, a->data, a->numel, &found) == 0 && found)
            cg_note_nondiff(g, reason);
        return;
    }
    for (int64_t i = 0; i < a->numel; i++)
        if (cg_get(a, i) == 0.0) {
            cg_note_nondiff(g, reason);
            return;
        }
}

/* ---- neg, exp, log, tanh, relu, abs, gelu -------------------------------- */

/* neg: -a. */
static double neg_f(double x) { return -x; }
static double neg_d(double x) { (void)x; return -1.0; }
static int neg_backward(cg_graph *g, cg_node *n) { return unary_backward(g, n, neg_d); }
cg_tensor *cg_neg(cg_graph *g, cg_tensor *a)
{
    return unary_forward(g, "neg", a, neg_f, CG_CUDA_NEG, neg_backward);
}

/* exp: e^a; the derivative is e^a again, recomputed in double. */
static int exp_backward(cg_graph *g, cg_node *n) { return unary_backward(g, n, exp); }
cg_tensor *cg_exp(cg_graph *g, cg_tensor *a)
{
    return unary_forward(g, "exp", a, exp, CG_CUDA_EXP, exp_backward);
}

/* log: natural log (nan below 0, -inf at 0, like torch); d/da = 1/a. */
static double log_d(double x) { return 1.0 / x; }
static int log_backward(cg_graph *g, cg_node *n) { return unary_backward(g, n, log_d); }
cg_tensor *cg_log(cg_graph *g, cg_tensor *a)
{
    return unary_forward(g, "log", a, log, CG_CUDA_LOG, log_backward);
}

/* tanh: d/da = 1 - tanh(a)^2. */
static double tanh_d(double x) { double t = tanh(x); return 1.0 - t * t; }
static int tanh_backward(cg_graph *g, cg_node *n) { return unary_backward(g, n, tanh_d); }
cg_tensor *cg_tanh(cg_graph *g, cg_tensor *a)
{
    return unary_forward(g, "tanh", a, tanh, CG_CUDA_TANH, tanh_backward);
}

/* relu: max(a, 0), nan passing through; gradient 1 above 0, else 0. */
static double relu_f(double x) { return isnan(x) || x > 0.0 ? x : 0.0; }
static double relu_d(double x) { return x > 0.0 ? 1.0 : 0.0; }
static int relu_backward(cg_graph *g, cg_node *n) { return unary_backward(g, n, relu_d); }
cg_tensor *cg_relu(cg_graph *g, cg_tensor *a)
{
    note_zeros(g, a, "relu at 0");
    return unary_forward(g, "relu", a, relu_f, CG_CUDA_RELU, relu_backward);
}

/* abs: |a|; gradient sign(a), 0 at 0. */
static double abs_d(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : 0.0; }
static int abs_backward(cg_graph *g, cg_node *n) { return unary_backward(g, n, abs_d); }
cg_tensor *cg_abs(cg_graph *g, cg_tensor *a)
{
    note_zeros(g, a, "abs at 0");
    return unary_forward(g, "abs", a, fabs, CG_CUDA_ABS, abs_backward);
}

/* gelu: a * Phi(a), Phi the standard normal CDF in its erf form (torch's
 * gelu with approximate='none'); d/da = Phi(a) + a * phi(a). The constants
 * are 1/sqrt(2) and 1/sqrt(2 pi). */
static double gelu_f(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); }
static double gelu_d(double x)
{
    return 0.5 * (1.0 + erf(x * 0.70710678118654752440)) + x * exp(-0.5 * x * x) * 0.39894228040143267794;
}
static int gelu_backward(cg_graph *g, cg_node *n) { return unary_backward(g, n, gelu_d); }
cg_tensor *cg_gelu(cg_graph *g, cg_tensor *a)
{
    return unary_forward(g, "gelu", a, gelu_f, CG_CUDA_GELU, gelu_backward);
}
