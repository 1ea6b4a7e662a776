/* test_ops.c — the local ops and the reverse pass, checked against central
 * finite differences in f64 and against values worked out by hand (never
 * against numbers printed by the code under test). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

/* ---- helpers ------------------------------------------------------------- */

static uint64_t lcg_state;

/* Knuth's MMIX LCG; the top 53 bits give a uniform double in [lo, hi). */
static double lcg_uniform(double lo, double hi)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(lcg_state >> 11) * 0x1p-53;
}

static cg_tensor *random_tensor(cg_graph *g, int ndim, const int64_t *shape, double lo, double hi)
{
    cg_tensor *t = cg_tensor_new(g, CG_F64, ndim, shape);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < t->numel; i++)
        cg_set(t, i, lcg_uniform(lo, hi));
    return t;
}

static cg_tensor *as_param(cg_tensor *t)
{
    t->requires_grad = true;
    t->is_leaf = true;
    return t;
}

/* A 1-D f64 tensor holding v[0..n-1]; a parameter when grad is set. */
static cg_tensor *vec(cg_graph *g, int64_t n, const double *v, bool grad)
{
    cg_tensor *t = cg_tensor_new(g, CG_F64, 1, &n);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < n; i++)
        cg_set(t, i, v[i]);
    return grad ? as_param(t) : t;
}

static void assert_values(const cg_tensor *t, int64_t n, const double *want, double tol)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->numel, n);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(cg_get(t, i) == want[i] || fabs(cg_get(t, i) - want[i]) <= tol, "element %lld: got %.17g, want %.17g",
                      (long long)i, cg_get(t, i), want[i]);
}

static int backward1(cg_graph *g, cg_tensor *root)
{
    return cg_backward(g, &root, 1);
}

/* ---- every op against central finite differences ------------------------- */

typedef enum {
    ADD, SUB, MUL, DIV, POW, NEG, EXP, LOG, TANH, RELU, ABS, SUM, MEAN, LSE, LOG_SOFTMAX,
    MAXN, MINN, MATMUL, TRANSPOSE, RESHAPE, CAT, SLICE, INDEX, CLONE, LAYER, SQRT, NORM, SOFTMAX,
    XENT, GELU
} op_kind;

typedef struct {
    int ndim;
    int64_t shape[CG_MAX_DIMS];
    double lo, hi;
} input_spec;

typedef struct {
    const char *name;
    op_kind op;
    int64_t arg[5]; /* axis; slice bounds; reshape's ndim then dims */
    int nin;
    input_spec in[3];
} grad_case;

#define IN(nd, lo, hi, ...) {nd, {__VA_ARGS__}, lo, hi}
#define M23 IN(2, -2, 2, 2, 3)
#define T234 IN(3, -2, 2, 2, 3, 4)
#define SCALAR IN(0, -2, 2, 0)

static const grad_case grad_cases[] = {
    {"add", ADD, {0}, 2, {M23, M23}},
    {"add broadcast scalar right", ADD, {0}, 2, {M23, SCALAR}},
    {"add broadcast [1] left", ADD, {0}, 2, {IN(1, -2, 2, 1), IN(2, -2, 2, 3, 2)}},
    {"sub", SUB, {0}, 2, {M23, M23}},
    {"sub broadcast [1,1]", SUB, {0}, 2, {M23, IN(2, -2, 2, 1, 1)}},
    {"sub broadcast scalar left", SUB, {0}, 2, {SCALAR, IN(1, -2, 2, 4)}},
    {"mul", MUL, {0}, 2, {M23, M23}},
    {"mul broadcast", MUL, {0}, 2, {IN(1, -2, 2, 3), SCALAR}},
    {"mul scalars", MUL, {0}, 2, {SCALAR, SCALAR}},
    {"div", DIV, {0}, 2, {M23, IN(2, 0.5, 2, 2, 3)}},
    {"div broadcast", DIV, {0}, 2, {SCALAR, IN(1, 0.5, 2, 3)}},
    {"pow", POW, {0}, 2, {IN(2, 0.5, 2, 2, 3), M23}},
    {"pow scalar exponent", POW, {0}, 2, {IN(1, 0.5, 2, 3), SCALAR}},
    {"pow scalar base", POW, {0}, 2, {IN(0, 0.5, 2, 0), IN(1, -2, 2, 3)}},
    {"neg", NEG, {0}, 1, {M23}},
    {"exp", EXP, {0}, 1, {M23}},
    {"log", LOG, {0}, 1, {IN(2, 0.5, 3, 2, 3)}},
    {"tanh", TANH, {0}, 1, {M23}},
    {"relu", RELU, {0}, 1, {M23}},
    {"abs", ABS, {0}, 1, {M23}},
    {"gelu", GELU, {0}, 1, {IN(2, -3, 3, 2, 3)}},
    {"sum all", SUM, {-1}, 1, {T234}},
    {"sum axis 0", SUM, {0}, 1, {T234}},
    {"sum axis 1", SUM, {1}, 1, {T234}},
    {"sum axis 2", SUM, {2}, 1, {T234}},
    {"sum of numel 0", SUM, {0}, 1, {IN(2, -2, 2, 0, 3)}},
    {"mean all", MEAN, {-1}, 1, {T234}},
    {"mean axis 1", MEAN, {1}, 1, {T234}},
    {"mean axis 2", MEAN, {2}, 1, {T234}},
    {"logsumexp all", LSE, {-1}, 1, {T234}},
    {"logsumexp axis 0", LSE, {0}, 1, {T234}},
    {"logsumexp axis 1", LSE, {1}, 1, {T234}},
    {"logsumexp axis 2", LSE, {2}, 1, {T234}},
    {"log_softmax all", LOG_SOFTMAX, {-1}, 1, {T234}},
    {"log_softmax axis 0", LOG_SOFTMAX, {0}, 1, {T234}},
    {"log_softmax axis 1", LOG_SOFTMAX, {1}, 1, {T234}},
    {"log_softmax axis 2", LOG_SOFTMAX, {2}, 1, {T234}},
    {"maxn of 3", MAXN, {0}, 3, {M23, M23, M23}},
    {"maxn of 1", MAXN, {0}, 1, {M23}},
    {"minn of 3", MINN, {0}, 3, {M23, M23, M23}},
    {"matmul 2-D", MATMUL, {0}, 2, {M23, IN(2, -2, 2, 3, 4)}},
    {"matmul 1-D left", MATMUL, {0}, 2, {IN(1, -2, 2, 3), IN(2, -2, 2, 3, 4)}},
    {"matmul 1-D right", MATMUL, {0}, 2, {M23, IN(1, -2, 2, 3)}},
    {"matmul 1-D both", MATMUL, {0}, 2, {IN(1, -2, 2, 3), IN(1, -2, 2, 3)}},
    {"matmul empty inner", MATMUL, {0}, 2, {IN(2, -2, 2, 2, 0), IN(2, -2, 2, 0, 3)}},
    {"transpose 2-D", TRANSPOSE, {0}, 1, {M23}},
    {"transpose 3-D", TRANSPOSE, {0}, 1, {T234}},
    {"transpose 1-D", TRANSPOSE, {0}, 1, {IN(1, -2, 2, 3)}},
    {"reshape with -1", RESHAPE, {2, 3, -1}, 1, {M23}},
    {"reshape to 3-D", RESHAPE, {3, 1, 3, 2}, 1, {IN(1, -2, 2, 6)}},
    {"cat axis 0", CAT, {0}, 2, {M23, IN(2, -2, 2, 1, 3)}},
    {"cat axis 1", CAT, {1}, 3, {M23, IN(2, -2, 2, 2, 2), IN(2, -2, 2, 2, 1)}},
    {"cat with numel 0", CAT, {0}, 3, {IN(2, -2, 2, 0, 3), M23, IN(2, -2, 2, 0, 3)}},
    {"cat legacy empty", CAT, {1}, 2, {IN(1, -2, 2, 0), M23}},
    {"slice negative", SLICE, {0, -3, -1}, 1, {IN(2, -2, 2, 5, 2)}},
    {"slice clamped axis 1", SLICE, {1, 1, 100}, 1, {IN(2, -2, 2, 2, 4)}},
    {"slice empty", SLICE, {0, 3, 1}, 1, {IN(2, -2, 2, 5, 2)}},
    {"index negative", INDEX, {-1}, 1, {IN(2, -2, 2, 3, 2)}},
    {"index 3-D", INDEX, {1}, 1, {IN(3, -2, 2, 2, 3, 2)}},
    {"clone", CLONE, {0}, 1, {M23}},
    {"layer: log_softmax(tanh(x@w) + b)", LAYER, {1}, 3,
     {M23, IN(2, -1, 1, 3, 4), IN(0, -1, 1, 0)}},
    {"add broadcast [2,3] + [3]", ADD, {0}, 2, {M23, IN(1, -2, 2, 3)}},
    {"mul broadcast [2,1] * [1,3]", MUL, {0}, 2, {IN(2, -2, 2, 2, 1), IN(2, -2, 2, 1, 3)}},
    {"sub broadcast [3] - [2,1]", SUB, {0}, 2, {IN(1, -2, 2, 3), IN(2, -2, 2, 2, 1)}},
    {"div broadcast [2,3,4] / [3,1]", DIV, {0}, 2, {T234, IN(2, 0.5, 2, 3, 1)}},
    {"pow broadcast [4,1,3] ^ [2,1]", POW, {0}, 2, {IN(3, 0.5, 2, 4, 1, 3), IN(2, -1, 1, 2, 1)}},
    {"sqrt", SQRT, {0}, 1, {IN(2, 0.5, 3, 2, 3)}},
    {"norm", NORM, {0}, 1, {T234}},
    {"softmax axis 0", SOFTMAX, {0}, 1, {T234}},
    {"softmax axis 2", SOFTMAX, {2}, 1, {T234}},
    {"softmax all", SOFTMAX, {-1}, 1, {M23}},
    {"cross_entropy, labels [2, 0, 3]", XENT, {0}, 1, {IN(2, -2, 2, 3, 4)}},
};

/* cross_entropy's labels in the gradient checks: constants, not inputs. */
static cg_tensor *xent_labels(cg_graph *g)
{
    cg_tensor *l = cg_tensor_new(g, CG_F64, 1, (int64_t[]){3});
    if (l) {
        cg_set(l, 0, 2);
        cg_set(l, 1, 0);
        cg_set(l, 2, 3);
    }
    return l;
}

static cg_tensor *apply(cg_graph *g, const grad_case *c, cg_tensor **x)
{
    int axis = (int)c->arg[0];
    switch (c->op) {
    case ADD: return cg_add(g, x[0], x[1]);
    case SUB: return cg_sub(g, x[0], x[1]);
    case MUL: return cg_mul(g, x[0], x[1]);
    case DIV: return cg_div(g, x[0], x[1]);
    case POW: return cg_pow(g, x[0], x[1]);
    case NEG: return cg_neg(g, x[0]);
    case EXP: return cg_exp(g, x[0]);
    case LOG: return cg_log(g, x[0]);
    case TANH: return cg_tanh(g, x[0]);
    case RELU: return cg_relu(g, x[0]);
    case ABS: return cg_abs(g, x[0]);
    case GELU: return cg_gelu(g, x[0]);
    case SUM: return cg_sum(g, x[0], axis);
    case MEAN: return cg_mean(g, x[0], axis);
    case LSE: return cg_logsumexp(g, x[0], axis);
    case LOG_SOFTMAX: return cg_log_softmax(g, x[0], axis);
    case MAXN: return cg_maxn(g, x, c->nin);
    case MINN: return cg_minn(g, x, c->nin);
    case MATMUL: return cg_matmul(g, x[0], x[1]);
    case TRANSPOSE: return cg_transpose(g, x[0]);
    case RESHAPE: return cg_reshape(g, x[0], axis, c->arg + 1);
    case CAT: return cg_cat(g, x, c->nin, axis);
    case SLICE: return cg_slice(g, x[0], axis, c->arg[1], c->arg[2]);
    case INDEX: return cg_index(g, x[0], c->arg[0]);
    case CLONE: return cg_clone(g, x[0]);
    case LAYER:
        return cg_log_softmax(g, cg_add(g, cg_tanh(g, cg_matmul(g, x[0], x[1])), x[2]), axis);
    case SQRT: return cg_sqrt(g, x[0]);
    case NORM: return cg_norm(g, x[0]);
    case SOFTMAX: return cg_softmax(g, x[0], axis);
    case XENT: return cg_cross_entropy(g, x[0], xent_labels(g));
    }
    return NULL;
}

/* sum_i w_i y_i, computed here rather than by the ops under test. */
static double weighted_output(cg_graph *g, const grad_case *c, cg_tensor **x, const cg_tensor *w)
{
    cg_tensor *y = apply(g, c, x);
    ck_assert_ptr_nonnull(y);
    double s = 0.0;
    for (int64_t i = 0; i < y->numel; i++)
        s += cg_get(w, i) * cg_get(y, i);
    return s;
}

static double central_difference(cg_graph *g, const grad_case *c, cg_tensor **x,
                                 const cg_tensor *w, int j, int64_t i)
{
    const double h = 1e-6;
    double v = cg_get(x[j], i);
    cg_set(x[j], i, v + h);
    double up = weighted_output(g, c, x, w);
    cg_set(x[j], i, v - h);
    double down = weighted_output(g, c, x, w);
    cg_set(x[j], i, v);
    return (up - down) / (2 * h);
}

/* Backward of L = sum(w * op(x)) with random weights w, so every output
 * element carries a different gradient, against central differences of L. */
START_TEST(test_gradcheck)
{
    const grad_case *c = &grad_cases[_i];
    lcg_state = 0x9e3779b97f4a7c15ULL + (uint64_t)_i;
    cg_graph *g = cg_graph_new();
    cg_tensor *x[3];
    for (int j = 0; j < c->nin; j++)
        x[j] = as_param(random_tensor(g, c->in[j].ndim, c->in[j].shape, c->in[j].lo, c->in[j].hi));
    cg_tensor *y = apply(g, c, x);
    ck_assert_msg(y != NULL, "%s: %s", c->name, cg_graph_status(g)->msg);
    cg_tensor *w = random_tensor(g, y->ndim, y->shape, -1, 1);
    ck_assert_int_eq(backward1(g, cg_sum(g, cg_mul(g, y, w), -1)), 0);
    for (int j = 0; j < c->nin; j++)
        for (int64_t i = 0; i < x[j]->numel; i++) {
            double analytic = x[j]->grad ? cg_get(x[j]->grad, i) : 0.0;
            double fd = central_difference(g, c, x, w, j, i);
            ck_assert_msg(fabs(analytic - fd) <= 1e-7 + 1e-6 * fabs(fd),
                          "%s: d/dx%d[%lld] analytic %.12g, finite difference %.12g", c->name, j,
                          (long long)i, analytic, fd);
        }
    cg_graph_free(g);
}
END_TEST

/* ---- hand-computed values ------------------------------------------------ */

/* A 2x3 f64 tensor [[1,2,3],[4,5,6]]. */
static cg_tensor *m123456(cg_graph *g)
{
    return cg_reshape(g, vec(g, 6, (double[]){1, 2, 3, 4, 5, 6}, false), 2, (int64_t[]){2, 3});
}

/* Forward values: a gradient check cannot see a forward that is wrong in a
 * way its own backward mirrors (a transpose that copies, say). */
START_TEST(test_shape_op_values)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *a = m123456(g);
    cg_tensor *t = cg_transpose(g, a);
    ck_assert(t->shape[0] == 3 && t->shape[1] == 2);
    assert_values(t, 6, (double[]){1, 4, 2, 5, 3, 6}, 0);
    cg_tensor *b = cg_reshape(g, vec(g, 8, (double[]){0, 1, 2, 3, 4, 5, 6, 7}, false), 3,
                              (int64_t[]){2, 2, 2});
    assert_values(cg_transpose(g, b), 8, (double[]){0, 2, 1, 3, 4, 6, 5, 7}, 0);
    cg_tensor *r = cg_reshape(g, a, 2, (int64_t[]){3, -1});
    ck_assert(r->shape[0] == 3 && r->shape[1] == 2);
    cg_tensor *s = cg_reshape(g, vec(g, 1, (double[]){7}, false), 0, NULL);
    ck_assert(s->ndim == 0 && cg_get(s, 0) == 7);
    cg_tensor *col = cg_reshape(g, vec(g, 2, (double[]){7, 8}, false), 2, (int64_t[]){2, 1});
    cg_tensor *c1 = cg_cat(g, (cg_tensor *[]){a, col}, 2, 1);
    ck_assert(c1->shape[0] == 2 && c1->shape[1] == 4);
    assert_values(c1, 8, (double[]){1, 2, 3, 7, 4, 5, 6, 8}, 0);
    cg_tensor *row = cg_reshape(g, vec(g, 3, (double[]){7, 8, 9}, false), 2, (int64_t[]){1, 3});
    assert_values(cg_cat(g, (cg_tensor *[]){a, row}, 2, 0), 9,
                  (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9}, 0);
    assert_values(cg_slice(g, a, 1, -2, 100), 4, (double[]){2, 3, 5, 6}, 0);
    assert_values(cg_slice(g, a, 0, -5, 1), 3, (double[]){1, 2, 3}, 0);
    assert_values(cg_index(g, a, -1), 3, (double[]){4, 5, 6}, 0);
    assert_values(cg_clone(g, a), 6, (double[]){1, 2, 3, 4, 5, 6}, 0);
    cg_graph_free(g);
}
END_TEST

START_TEST(test_arithmetic_values)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *a = m123456(g);
    assert_values(cg_sum(g, a, 0), 3, (double[]){5, 7, 9}, 0);
    assert_values(cg_sum(g, a, 1), 2, (double[]){6, 15}, 0);
    assert_values(cg_sum(g, a, -1), 1, (double[]){21}, 0);
    assert_values(cg_mean(g, a, 1), 2, (double[]){2, 5}, 0);
    assert_values(cg_logsumexp(g, a, 1), 2,
                  (double[]){log(exp(1) + exp(2) + exp(3)), log(exp(4) + exp(5) + exp(6))}, 1e-14);
    assert_values(cg_matmul(g, a, vec(g, 3, (double[]){1, 0, -1}, false)), 2, (double[]){-2, -2}, 0);
    assert_values(cg_matmul(g, vec(g, 2, (double[]){1, 1}, false), a), 3, (double[]){5, 7, 9}, 0);
    cg_tensor *dot = cg_matmul(g, vec(g, 3, (double[]){1, 2, 3}, false),
                               vec(g, 3, (double[]){4, 5, 6}, false));
    ck_assert_int_eq(dot->ndim, 0);
    assert_values(dot, 1, (double[]){32}, 0);
    assert_values(cg_matmul(g, a, cg_transpose(g, a)), 4, (double[]){14, 32, 32, 77}, 0);
    cg_tensor *v = vec(g, 2, (double[]){2, 4}, false);
    assert_values(cg_pow(g, v, vec(g, 2, (double[]){3, 0.5}, false)), 2, (double[]){8, 2}, 0);
    assert_values(cg_div(g, cg_scalar(g, CG_F64, 1), v), 2, (double[]){0.5, 0.25}, 0);
    assert_values(cg_sub(g, cg_scalar(g, CG_F64, 10), v), 2, (double[]){8, 6}, 0);
    assert_values(cg_neg(g, v), 2, (double[]){-2, -4}, 0);
    cg_graph_free(g);
}
END_TEST

/* y = x^e at x = [0, 0, 2], e = [2, 0, 3]: y = [0, 1, 8]; dy/dx = e x^(e-1)
 * = [0, 0 (e == 0), 12]; dy/de = y ln x = [0 (x == 0), 0 (x == 0), 8 ln 2]. */
START_TEST(test_pow_at_zero_base)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 3, (double[]){0, 0, 2}, true), *e = vec(g, 3, (double[]){2, 0, 3}, true);
    cg_tensor *y = cg_pow(g, x, e);
    assert_values(y, 3, (double[]){0, 1, 8}, 0);
    ck_assert_int_eq(backward1(g, cg_sum(g, y, -1)), 0);
    assert_values(x->grad, 3, (double[]){0, 0, 12}, 0);
    assert_values(e->grad, 3, (double[]){0, 0, 8 * log(2.0)}, 1e-15);
    cg_graph_free(g);
}
END_TEST

/* max per column of {1,5,2}, {1,2,2}, {0,5,2}: ties share the gradient of sum. */
START_TEST(test_maxn_ties_share_gradient)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x[3] = {vec(g, 3, (double[]){1, 5, 2}, true), vec(g, 3, (double[]){1, 2, 2}, true),
                       vec(g, 3, (double[]){0, 5, 2}, true)};
    cg_tensor *y = cg_maxn(g, x, 3);
    assert_values(y, 3, (double[]){1, 5, 2}, 0);
    ck_assert_str_eq(cg_graph_nondiff(g), "maxn at a tie");
    ck_assert_int_eq(backward1(g, cg_sum(g, y, -1)), 0);
    assert_values(x[0]->grad, 3, (double[]){0.5, 0.5, 1.0 / 3}, 1e-15);
    assert_values(x[1]->grad, 3, (double[]){0.5, 0, 1.0 / 3}, 1e-15);
    assert_values(x[2]->grad, 3, (double[]){0, 0.5, 1.0 / 3}, 1e-15);
    cg_graph_free(g);
}
END_TEST

START_TEST(test_minn_ties_and_no_ties)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x[2] = {vec(g, 2, (double[]){1, 3}, true), vec(g, 2, (double[]){2, 4}, true)};
    cg_tensor *y = cg_minn(g, x, 2);
    assert_values(y, 2, (double[]){1, 3}, 0);
    ck_assert_ptr_null(cg_graph_nondiff(g));
    cg_set(x[1], 0, 1.0);
    y = cg_minn(g, x, 2);
    ck_assert_str_eq(cg_graph_nondiff(g), "minn at a tie");
    ck_assert_int_eq(backward1(g, cg_sum(g, y, -1)), 0);
    assert_values(x[0]->grad, 2, (double[]){0.5, 1}, 0);
    assert_values(x[1]->grad, 2, (double[]){0.5, 0}, 0);
    cg_graph_free(g);
}
END_TEST

START_TEST(test_relu_abs_at_zero)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 3, (double[]){-1, 0, 2}, true);
    cg_tensor *r = cg_relu(g, x);
    ck_assert_str_eq(cg_graph_nondiff(g), "relu at 0");
    assert_values(r, 3, (double[]){0, 0, 2}, 0);
    ck_assert_int_eq(backward1(g, cg_sum(g, r, -1)), 0);
    assert_values(x->grad, 3, (double[]){0, 0, 1}, 0);
    cg_zero_grad(g);
    cg_tensor *a = cg_abs(g, x);
    assert_values(a, 3, (double[]){1, 0, 2}, 0);
    ck_assert_str_eq(cg_graph_nondiff(g), "relu at 0"); /* the first reason stays */
    ck_assert_int_eq(backward1(g, cg_sum(g, a, -1)), 0);
    assert_values(x->grad, 3, (double[]){-1, 0, 1}, 0);
    cg_graph_free(g);
}
END_TEST

/* gelu(x) = x Phi(x), gelu'(x) = Phi(x) + x phi(x), with the normal
 * distribution's tabled values Phi(1) = 0.8413447460685429 and
 * phi(1) = 0.24197072451914337 (Phi(-1) = 1 - Phi(1), phi even). */
START_TEST(test_gelu_values)
{
    const double Phi1 = 0.8413447460685429, phi1 = 0.24197072451914337;
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 3, (double[]){-1, 0, 1}, true);
    cg_tensor *y = cg_gelu(g, x);
    assert_values(y, 3, (double[]){-(1 - Phi1), 0, Phi1}, 1e-15);
    ck_assert_int_eq(backward1(g, cg_sum(g, y, -1)), 0);
    assert_values(x->grad, 3, (double[]){(1 - Phi1) - phi1, 0.5, Phi1 + phi1}, 1e-15);
    cg_graph_free(g);
}
END_TEST

/* log(e^1000 + e^1000) = 1000 + log 2, without overflowing to inf. */
START_TEST(test_logsumexp_large_inputs)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 2, (double[]){1000, 1000}, true);
    cg_tensor *y = cg_logsumexp(g, x, 0);
    ck_assert_int_eq(y->ndim, 0);
    assert_values(y, 1, (double[]){1000 + log(2.0)}, 1e-12);
    ck_assert_int_eq(backward1(g, y), 0);
    assert_values(x->grad, 2, (double[]){0.5, 0.5}, 1e-15);
    assert_values(cg_logsumexp(g, vec(g, 2, (double[]){-1000, -1000}, false), -1), 1,
                  (double[]){-1000 + log(2.0)}, 1e-12);
    assert_values(cg_logsumexp(g, vec(g, 2, (double[]){-INFINITY, -INFINITY}, false), 0), 1,
                  (double[]){-INFINITY}, 0);
    cg_graph_free(g);
}
END_TEST

/* log_softmax([1000, 1001]) = [-log(1 + e), 1 - log(1 + e)]; with softmax
 * p = [1, e] / (1 + e), d sum(y) / dx = 1 - 2 p. */
START_TEST(test_log_softmax_large_inputs)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 2, (double[]){1000, 1001}, true);
    cg_tensor *y = cg_log_softmax(g, x, 0);
    double l = log1p(exp(1.0)), p0 = 1 / (1 + exp(1.0)), p1 = exp(1.0) / (1 + exp(1.0));
    assert_values(y, 2, (double[]){-l, 1 - l}, 1e-12);
    ck_assert_int_eq(backward1(g, cg_sum(g, y, -1)), 0);
    assert_values(x->grad, 2, (double[]){1 - 2 * p0, 1 - 2 * p1}, 1e-12);
    cg_graph_free(g);
}
END_TEST

/* sqrt([4, 9]) = [2, 3]; norm([3, 4]) = 5 with gradient x / |x| = [0.6, 0.8];
 * softmax([0, ln 3]) = [1/4, 3/4]; cross_entropy([[0, ln 3]], [1]) = -ln(3/4)
 * with gradient softmax - onehot = [1/4, -1/4]; labels that are not whole
 * numbers in 0..C-1 are refused, naming the first. */
START_TEST(test_loss_op_values)
{
    cg_graph *g = cg_graph_new();
    assert_values(cg_sqrt(g, vec(g, 2, (double[]){4, 9}, false)), 2, (double[]){2, 3}, 0);
    cg_tensor *v = vec(g, 2, (double[]){3, 4}, true);
    cg_tensor *n = cg_norm(g, v);
    ck_assert_int_eq(n->ndim, 0);
    assert_values(n, 1, (double[]){5}, 1e-15);
    ck_assert_int_eq(backward1(g, n), 0);
    assert_values(v->grad, 2, (double[]){0.6, 0.8}, 1e-15);
    assert_values(cg_softmax(g, vec(g, 2, (double[]){0, log(3.0)}, false), 0), 2, (double[]){0.25, 0.75},
                  1e-15);
    cg_tensor *logits = cg_tensor_new(g, CG_F64, 2, (int64_t[]){1, 2});
    cg_set(logits, 1, log(3.0));
    as_param(logits);
    cg_tensor *one = vec(g, 1, (double[]){1}, false);
    cg_tensor *ce = cg_cross_entropy(g, logits, one);
    ck_assert_int_eq(ce->ndim, 0);
    assert_values(ce, 1, (double[]){-log(0.75)}, 1e-15);
    ck_assert_int_eq(backward1(g, ce), 0);
    assert_values(logits->grad, 2, (double[]){0.25, -0.25}, 1e-15);
    ck_assert_ptr_null(cg_cross_entropy(g, logits, vec(g, 1, (double[]){0.5}, false)));
    ck_assert_str_eq(cg_graph_status(g)->msg, "expected class labels in 0..1, got 0.5 at 0");
    ck_assert_ptr_null(cg_cross_entropy(g, logits, vec(g, 1, (double[]){2}, false)));
    ck_assert_str_eq(cg_graph_status(g)->msg, "expected class labels in 0..1, got 2 at 0");
    ck_assert_ptr_null(cg_cross_entropy(g, logits, vec(g, 2, (double[]){0, 1}, false)));
    ck_assert_str_eq(cg_graph_status(g)->msg,
                     "expected logits [B, C] and labels [B], got 2-D logits and 2 labels");
    cg_graph_free(g);
}
END_TEST

/* numpy's broadcasting: [[1], [2]] + [10, 20, 30] = [[11, 21, 31], [12, 22, 32]];
 * the [2,1] operand's gradient sums its row (3 each), the [3] one's its
 * column (2 each); shapes that do not broadcast keep their message. */
START_TEST(test_numpy_broadcasting_values)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *col = cg_tensor_new(g, CG_F64, 2, (int64_t[]){2, 1});
    cg_set(col, 0, 1);
    cg_set(col, 1, 2);
    as_param(col);
    cg_tensor *row = vec(g, 3, (double[]){10, 20, 30}, true);
    cg_tensor *y = cg_add(g, col, row);
    ck_assert(y->ndim == 2 && y->shape[0] == 2 && y->shape[1] == 3);
    assert_values(y, 6, (double[]){11, 21, 31, 12, 22, 32}, 0);
    ck_assert_int_eq(backward1(g, cg_sum(g, y, -1)), 0);
    assert_values(col->grad, 2, (double[]){3, 3}, 0);
    assert_values(row->grad, 3, (double[]){2, 2, 2}, 0);
    cg_tensor *zero_rows = cg_tensor_new(g, CG_F64, 2, (int64_t[]){0, 1});
    cg_tensor *e = cg_mul(g, zero_rows, row);
    ck_assert(e->shape[0] == 0 && e->shape[1] == 3);
    cg_tensor *m = cg_tensor_new(g, CG_F64, 2, (int64_t[]){2, 3});
    ck_assert_ptr_null(cg_add(g, m, vec(g, 2, (double[]){1, 2}, false)));
    ck_assert_str_eq(cg_graph_status(g)->msg, "expected matching shapes for add, got [2,3] and [2]");
    cg_graph_free(g);
}
END_TEST

START_TEST(test_numel0_shapes)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *e = cg_tensor_new(g, CG_F64, 2, (int64_t[]){0, 3});
    ck_assert_int_eq(e->numel, 0);
    cg_tensor *s = cg_sum(g, e, 0);
    ck_assert_int_eq(s->ndim, 1);
    assert_values(s, 3, (double[]){0, 0, 0}, 0);
    ck_assert(isnan(cg_get(cg_mean(g, e, -1), 0)));
    cg_tensor *m = cg_matmul(g, cg_tensor_new(g, CG_F64, 2, (int64_t[]){2, 0}), e);
    ck_assert_int_eq(m->shape[0], 2);
    assert_values(m, 6, (double[]){0, 0, 0, 0, 0, 0}, 0);
    cg_tensor *sl = cg_slice(g, m, 1, 2, 2);
    ck_assert_int_eq(sl->numel, 0);
    ck_assert_int_eq(cg_reshape(g, e, 3, (int64_t[]){5, 0, 7})->numel, 0);
    cg_graph_free(g);
}
END_TEST

/* ---- errors -------------------------------------------------------------- */

/* The call must fail with exactly this message. */
#define ASSERT_FAILS(g, call, message)                                                             \
    do {                                                                                           \
        *cg_graph_status(g) = CG_STATUS_OK;                                                        \
        ck_assert_ptr_null(call);                                                                  \
        ck_assert_str_eq(cg_graph_status(g)->msg, message);                                        \
    } while (0)

START_TEST(test_error_messages)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *m22 = cg_tensor_new(g, CG_F64, 2, (int64_t[]){2, 2});
    cg_tensor *v3 = as_param(cg_tensor_new(g, CG_F64, 1, (int64_t[]){3}));
    cg_tensor *m23 = cg_tensor_new(g, CG_F64, 2, (int64_t[]){2, 3});
    cg_tensor *m42 = cg_tensor_new(g, CG_F64, 2, (int64_t[]){4, 2});
    cg_tensor *f32 = cg_tensor_new(g, CG_F32, 1, (int64_t[]){3});
    ASSERT_FAILS(g, cg_mul(g, m22, v3), "expected matching shapes for mul, got [2,2] and [3]");
    ASSERT_FAILS(g, cg_add(g, f32, v3), "expected matching dtypes for add, got f32 and f64");
    ASSERT_FAILS(g, cg_sum(g, m23, 3), "expected axis in [0, 2), got 3");
    ASSERT_FAILS(g, cg_mean(g, cg_scalar(g, CG_F64, 1), 0), "expected axis in [0, 0), got 0");
    ASSERT_FAILS(g, cg_log_softmax(g, v3, 1), "expected axis in [0, 1), got 1");
    ASSERT_FAILS(g, cg_matmul(g, m23, m42),
                 "expected inner dimensions to agree for matmul, got [2,3] and [4,2]");
    ASSERT_FAILS(g, cg_matmul(g, cg_scalar(g, CG_F64, 1), v3),
                 "expected 1-D or 2-D operands for matmul, got [] and [3]");
    ASSERT_FAILS(g, cg_maxn(g, ((cg_tensor *[]){m22, m23}), 2),
                 "expected matching shapes for maxn, got [2,2] and [2,3]");
    ASSERT_FAILS(g, cg_minn(g, &m22, 0), "expected at least one input for minn, got 0");
    ASSERT_FAILS(g, cg_cat(g, ((cg_tensor *[]){m23, m42}), 2, 0),
                 "expected matching shapes except on axis 0 for cat, got [2,3] and [4,2]");
    ASSERT_FAILS(g, cg_cat(g, &m23, 1, 2), "expected axis in [0, 2), got 2");
    ASSERT_FAILS(g, cg_reshape(g, m23, 2, ((int64_t[]){4, 2})),
                 "expected a shape with 6 elements to reshape [2,3], got [4,2]");
    ASSERT_FAILS(g, cg_reshape(g, m23, 2, ((int64_t[]){-1, -1})),
                 "expected non-negative dimensions and at most one -1 for reshape, got [-1,-1]");
    ASSERT_FAILS(g, cg_slice(g, v3, -1, 0, 1), "expected axis in [0, 1), got -1");
    ASSERT_FAILS(g, cg_index(g, v3, 3), "expected index in [-3, 3), got 3");
    ASSERT_FAILS(g, cg_tensor_new(g, CG_F64, 5, ((int64_t[]){1, 1, 1, 1, 1})),
                 "expected 0 to 4 dimensions, got 5");
    ck_assert_int_eq(cg_tape_len(g), 0); /* failed ops record nothing */
    cg_graph_free(g);
}
END_TEST

/* A caller prefixing a position passes the old message back in. */
START_TEST(test_fail_may_quote_itself)
{
    cg_graph *g = cg_graph_new();
    ck_assert_str_eq(cg_graph_status(g)->msg, "");
    cg_error(cg_graph_status(g), "shape mismatch");
    cg_error(cg_graph_status(g), "case.cg:3:5: %s", cg_graph_status(g)->msg);
    ck_assert_str_eq(cg_graph_status(g)->msg, "case.cg:3:5: shape mismatch");
    *cg_graph_status(g) = CG_STATUS_OK;
    ck_assert_str_eq(cg_graph_status(g)->msg, "");
    cg_graph_free(g);
}
END_TEST

/* ---- the reverse pass ---------------------------------------------------- */

/* L = sum(x * x), dL/dx = 2x; two passes add up to 4x, zero_grad clears. */
START_TEST(test_grad_accumulates_over_passes)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 2, (double[]){1.5, -2}, true);
    cg_tensor *loss = cg_sum(g, cg_mul(g, x, x), -1);
    ck_assert_int_eq(cg_tape_len(g), 2);
    ck_assert_int_eq(backward1(g, loss), 0);
    assert_values(x->grad, 2, (double[]){3, -4}, 0);
    ck_assert_int_eq(backward1(g, loss), 0);
    assert_values(x->grad, 2, (double[]){6, -8}, 0);
    ck_assert_int_eq(cg_tape_len(g), 2);
    cg_zero_grad(g);
    ck_assert_ptr_null(x->grad);
    ck_assert_int_eq(backward1(g, loss), 0);
    assert_values(x->grad, 2, (double[]){3, -4}, 0);
    cg_graph_free(g);
}
END_TEST

/* y = 3x retained, L = sum(y * y): dL/dy = 2y = 6x, dL/dx = 18x. */
START_TEST(test_retain_intermediate)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 2, (double[]){1, 2}, true);
    cg_tensor *y = cg_mul(g, x, cg_scalar(g, CG_F64, 3));
    y->retain = true;
    cg_tensor *z = cg_mul(g, y, y);
    ck_assert_int_eq(backward1(g, cg_sum(g, z, -1)), 0);
    assert_values(y->grad, 2, (double[]){6, 12}, 0);
    assert_values(x->grad, 2, (double[]){18, 36}, 0);
    ck_assert_ptr_null(z->grad);
    ck_assert_ptr_null(z->pgrad);
    cg_graph_free(g);
}
END_TEST

/* root.backward(grad): d(sum grad * x^2)/dx = 2 x grad, by hand: x = [1, 2, 3],
 * grad = [1, 10, 100] gives [2, 40, 600]; the gradient is adopted, not
 * copied, and a root without grad fails as in cg_backward. */
START_TEST(test_backward_with_given_gradient)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 3, (double[]){1, 2, 3}, true);
    cg_tensor *y = cg_mul(g, x, x);
    cg_tensor *grad = vec(g, 3, (double[]){1, 10, 100}, false);
    y->retain = true;
    ck_assert_int_eq(cg_backward_with(g, y, grad), 0);
    assert_values(x->grad, 3, (double[]){2, 40, 600}, 0);
    ck_assert_ptr_eq(y->grad, grad); /* adopted */
    cg_tensor *c = vec(g, 3, (double[]){1, 1, 1}, false);
    ck_assert_int_eq(cg_backward_with(g, c, grad), -1);
    ck_assert_ptr_nonnull(strstr(cg_graph_status(g)->msg, "does not require grad"));
    cg_graph_free(g);
}
END_TEST

/* fill: every element v, rounded to the dtype once. */
START_TEST(test_fill)
{
    cg_graph *g = cg_graph_new();
    int64_t n = 5;
    cg_dtype dts[] = {CG_F64, CG_F32, CG_BF16, CG_F16};
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        cg_tensor *t = cg_full(g, dts[k], 1, &n, -7.0);
        ck_assert_int_eq(cg_tensor_fill(g, t, 0.5), 0);
        for (int64_t i = 0; i < n; i++)
            ck_assert_double_eq(cg_get(t, i), 0.5);
    }
    cg_graph_free(g);
}
END_TEST

START_TEST(test_root_without_grad_fails)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 2, (double[]){1, 2}, true);
    cg_tensor *c = vec(g, 2, (double[]){3, 4}, false);
    cg_tensor *good = cg_sum(g, x, -1), *bad = cg_sum(g, c, -1);
    ck_assert(!bad->requires_grad);
    ck_assert_int_eq(cg_tape_len(g), 1); /* the constant's sum is not recorded */
    ck_assert_int_eq(cg_backward(g, (cg_tensor *[]){good, bad}, 2), -1);
    ck_assert_str_eq(cg_graph_status(g)->msg,
                     "element 0 of tensors does not require grad and does not have a grad_fn");
    ck_assert_ptr_null(x->grad);
    ck_assert_int_eq(cg_backward(g, (cg_tensor *[]){NULL}, 1), 0); /* a rank without a root */
    ck_assert_ptr_null(x->grad);
    cg_graph_free(g);
}
END_TEST

/* One replicated tensor named as the root of W ranks (the oracle's shared
 * runs, sim_comm.c): its seed is the sum of the W weights added in order,
 * exactly what seeding it with the first and adding each later one gives
 * (float64, bit for bit); a float32 root still takes them weight by weight. */
START_TEST(test_root_named_many_times)
{
    const double w[] = {0.1, 0.2, 5.0, 0.3};
    for (int f32 = 0; f32 <= 1; f32++) {
        cg_graph *g = cg_graph_new();
        int64_t n = 2;
        cg_tensor *x = as_param(cg_tensor_new(g, f32 ? CG_F32 : CG_F64, 1, &n));
        cg_tensor *three = cg_tensor_new(g, x->dtype, 1, &n), *seven = cg_tensor_new(g, x->dtype, 1, &n);
        for (int i = 0; i < 2; i++) {
            cg_set(x, i, i + 1.0);
            cg_set(three, i, 3.0);
            cg_set(seven, i, 7.0);
        }
        cg_tensor *y = cg_mul(g, x, three), *z = cg_mul(g, x, seven);
        ck_assert_int_eq(cg_backward_weighted(g, (cg_tensor *[]){y, y, NULL, z, y},
                                              (double[]){w[0], w[1], 9.0, w[2], w[3]}, 5), 0);
        double want = ((w[0] + w[1]) + w[3]) * 3.0 + w[2] * 7.0;
        for (int i = 0; i < 2; i++) {
            if (f32)
                ck_assert(fabs(cg_get(x->grad, i) - want) <= 1e-5 * want);
            else
                ck_assert_double_eq(cg_get(x->grad, i), want); /* bit for bit */
        }
        cg_graph_free(g);
    }
}
END_TEST

static int always_calls, plain_calls;
static double pgrad_seen;

/* Stands in for a collective: identity, counting calls and the gradient it saw. */
static int counting_backward(cg_graph *g, cg_node *n)
{
    *(n->always_run ? &always_calls : &plain_calls) += 1;
    for (int64_t i = 0; i < n->out->pgrad->numel; i++)
        pgrad_seen += fabs(cg_get(n->out->pgrad, i));
    return cg_accum_grad(g, n->in[0], n->out->pgrad);
}

static cg_tensor *counted_identity(cg_graph *g, cg_tensor *x, bool always_run)
{
    cg_tensor *y = cg_tensor_like(g, x);
    cg_node *n = cg_record(g, "counted", y, &x, 1, counting_backward);
    ck_assert_ptr_nonnull(n);
    if (always_run)
        cg_node_always_run(g, n);
    return y;
}

/* Neither counted node reaches the root: only the always_run one runs, and
 * with a zero gradient; reached, it sees the real one (3 per element). */
START_TEST(test_always_run_gets_zero_gradient)
{
    cg_graph *g = cg_graph_new();
    always_calls = plain_calls = 0;
    pgrad_seen = 0;
    cg_tensor *x = vec(g, 2, (double[]){1, 2}, true);
    cg_tensor *comm = counted_identity(g, x, true);
    counted_identity(g, x, false);
    ck_assert_int_eq(backward1(g, cg_sum(g, cg_mul(g, x, cg_scalar(g, CG_F64, 2)), -1)), 0);
    ck_assert_int_eq(always_calls, 1);
    ck_assert_int_eq(plain_calls, 0);
    ck_assert(pgrad_seen == 0.0);
    assert_values(x->grad, 2, (double[]){2, 2}, 0);
    ck_assert_int_eq(backward1(g, cg_sum(g, cg_mul(g, comm, cg_scalar(g, CG_F64, 3)), -1)), 0);
    ck_assert_int_eq(always_calls, 2);
    ck_assert(pgrad_seen == 6.0);
    assert_values(x->grad, 2, (double[]){5, 5}, 0);
    cg_graph_free(g);
}
END_TEST

/* Issue 39 item 4: N backward calls, each on its own sum of x, visit O(N) tape
 * nodes in all, not O(N^2): a pass stops once nothing older can receive a
 * gradient. The roots repeat (one seed sum per occurrence) and x's gradient is
 * every pass's, added: N * 2 * ... by hand. */
START_TEST(test_many_backward_calls_walk_linearly)
{
    enum { N = 2000 };
    cg_graph *g = cg_graph_new();
    cg_tensor *x = vec(g, 2, (double[]){1, 2}, true);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(backward1(g, cg_sum(g, cg_mul(g, x, cg_scalar(g, CG_F64, 2)), -1)), 0);
    assert_values(x->grad, 2, (double[]){2.0 * N, 2.0 * N}, 0);
    /* each pass visits its own sum and mul, and one node more to see it may stop */
    ck_assert_int_le(cg_graph_nodes_walked(g), 3 * N);
    /* an older node the pass cannot reach is never visited, a communication one always is */
    cg_tensor *root = cg_sum(g, x, -1);
    counted_identity(g, x, true);
    int64_t before = cg_graph_nodes_walked(g);
    always_calls = 0;
    ck_assert_int_eq(backward1(g, root), 0);
    ck_assert_int_eq(always_calls, 1);
    ck_assert_int_ge(cg_graph_nodes_walked(g) - before, 2);
    cg_graph_free(g);
}
END_TEST

/* ---- storage and construction -------------------------------------------- */

/* cg_set then cg_get through a one-element tensor of dtype dt. */
static double stored(cg_graph *g, cg_dtype dt, double v)
{
    cg_tensor *t = cg_scalar(g, dt, v);
    ck_assert_ptr_nonnull(t);
    return cg_get(t, 0);
}

/* Expected values from the formats: f32 keeps 24 significant bits, f16 11
 * (5 exponent bits, subnormals in units of 2^-24), bf16 8; ties go to even. */
START_TEST(test_storage_rounding)
{
    cg_graph *g = cg_graph_new();
    ck_assert(stored(g, CG_F32, 0.1) == (double)(float)0.1);
    ck_assert(stored(g, CG_F32, 0.1) == 13421773 * 0x1p-27);
    ck_assert(stored(g, CG_F64, 0.1) == 0.1);
    ck_assert(stored(g, CG_F16, 1.0) == 1.0);
    ck_assert(stored(g, CG_F16, 0.1) == 1638 * 0x1p-14); /* 0.0999755859375 */
    ck_assert(stored(g, CG_F16, 1.0 / 3) == 1365 * 0x1p-12);
    ck_assert(stored(g, CG_F16, 1 + 0x1p-11) == 1.0);
    ck_assert(stored(g, CG_F16, 1 + 3 * 0x1p-11) == 1 + 0x1p-9);
    ck_assert(stored(g, CG_F16, 65504) == 65504);
    ck_assert(isinf(stored(g, CG_F16, 65520)));
    ck_assert(stored(g, CG_F16, 0x1p-24) == 0x1p-24);
    ck_assert(stored(g, CG_F16, 0x1p-25) == 0.0);
    ck_assert(stored(g, CG_F16, 3 * 0x1p-25) == 0x1p-23);
    ck_assert(stored(g, CG_BF16, 1.0) == 1.0);
    ck_assert(stored(g, CG_BF16, 0.1) == 0.10009765625); /* 205 * 2^-11 */
    ck_assert(stored(g, CG_BF16, -0.1) == -0.10009765625);
    ck_assert(stored(g, CG_BF16, 1.0 / 3) == 171 * 0x1p-9);
    ck_assert(stored(g, CG_BF16, 1 + 0x1p-8) == 1.0);
    ck_assert(stored(g, CG_BF16, 1 + 3 * 0x1p-8) == 1 + 0x1p-6);
    cg_graph_free(g);
}
END_TEST

/* An f32 op rounds its double result once: 0.1f + 0.2f in f32. */
START_TEST(test_f32_ops_round_once)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *s = cg_add(g, cg_scalar(g, CG_F32, 0.1), cg_scalar(g, CG_F32, 0.2));
    ck_assert_int_eq(s->dtype, CG_F32);
    ck_assert(cg_get(s, 0) == (double)(0.1f + 0.2f));
    cg_tensor *c = cg_tensor_cast(g, vec(g, 2, (double[]){0.1, 1.0 / 3}, false), CG_BF16);
    ck_assert_int_eq(c->dtype, CG_BF16);
    assert_values(c, 2, (double[]){0.10009765625, 171 * 0x1p-9}, 0);
    ck_assert(!c->requires_grad && c->node == NULL);
    cg_graph_free(g);
}
END_TEST

START_TEST(test_construction_and_shapes)
{
    cg_graph *g = cg_graph_new();
    char buf[32];
    cg_tensor *t = cg_full(g, CG_F64, 3, (int64_t[]){2, 3, 4}, 1.5);
    ck_assert_int_eq(t->numel, 24);
    ck_assert(cg_get(t, 23) == 1.5);
    ck_assert_str_eq(cg_shape_str(t, buf, sizeof buf), "[2,3,4]");
    ck_assert_str_eq(cg_shape_str(t, buf, 5), "[2,3");
    cg_tensor *s = cg_scalar(g, CG_F32, 2);
    ck_assert_int_eq(s->ndim, 0);
    ck_assert_int_eq(s->numel, 1);
    ck_assert_str_eq(cg_shape_str(s, buf, sizeof buf), "[]");
    ck_assert_int_lt(t->id, s->id);
    int64_t st[3];
    cg_strides(3, t->shape, st);
    ck_assert(st[0] == 12 && st[1] == 4 && st[2] == 1);
    cg_tensor *l = cg_tensor_like(g, t);
    ck_assert(cg_same_shape(l, t) && !cg_same_shape(l, s));
    ck_assert(cg_get(l, 0) == 0.0);
    ck_assert_ptr_null(cg_tensor_new(g, CG_F64, 2, (int64_t[]){2, -1}));
    char *d = cg_strdup(g, "all_reduce");
    ck_assert_str_eq(d, "all_reduce");
    cg_tensor *det = cg_detach(g, as_param(t));
    ck_assert(!det->requires_grad && det->node == NULL && cg_get(det, 5) == 1.5);
    cg_graph_free(g);
    cg_graph_free(NULL);
}
END_TEST

static Suite *ops_suite(void)
{
    Suite *s = suite_create("ops");
    TCase *grad = tcase_create("gradcheck");
    tcase_add_loop_test(grad, test_gradcheck, 0, (int)(sizeof grad_cases / sizeof grad_cases[0]));
    suite_add_tcase(s, grad);
    TCase *hand = tcase_create("values");
    tcase_add_test(hand, test_shape_op_values);
    tcase_add_test(hand, test_arithmetic_values);
    tcase_add_test(hand, test_pow_at_zero_base);
    tcase_add_test(hand, test_maxn_ties_share_gradient);
    tcase_add_test(hand, test_minn_ties_and_no_ties);
    tcase_add_test(hand, test_relu_abs_at_zero);
    tcase_add_test(hand, test_gelu_values);
    tcase_add_test(hand, test_logsumexp_large_inputs);
    tcase_add_test(hand, test_log_softmax_large_inputs);
    tcase_add_test(hand, test_numel0_shapes);
    tcase_add_test(hand, test_loss_op_values);
    tcase_add_test(hand, test_numpy_broadcasting_values);
    tcase_add_test(hand, test_error_messages);
    tcase_add_test(hand, test_fail_may_quote_itself);
    suite_add_tcase(s, hand);
    TCase *ag = tcase_create("autograd");
    tcase_add_test(ag, test_grad_accumulates_over_passes);
    tcase_add_test(ag, test_retain_intermediate);
    tcase_add_test(ag, test_root_without_grad_fails);
    tcase_add_test(ag, test_root_named_many_times);
    tcase_add_test(ag, test_backward_with_given_gradient);
    tcase_add_test(ag, test_fill);
    tcase_add_test(ag, test_always_run_gets_zero_gradient);
    tcase_add_test(ag, test_many_backward_calls_walk_linearly);
    suite_add_tcase(s, ag);
    TCase *store = tcase_create("storage");
    tcase_add_test(store, test_storage_rounding);
    tcase_add_test(store, test_f32_ops_round_once);
    tcase_add_test(store, test_construction_and_shapes);
    suite_add_tcase(s, store);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ops_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
