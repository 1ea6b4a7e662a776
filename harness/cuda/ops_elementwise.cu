/* ops_elementwise.cu — the device twin of ops_elementwise.c: binary and
 * unary elementwise ops, forward and backward (cuda_ops.h).
 *
 * Each op is a struct of its value and partial derivatives, written exactly
 * as the CPU's functions (same special cases: pow's 0^0 and log(0), relu's
 * nan), and instantiates one forward and one backward kernel. A numel-1
 * operand broadcasts; its gradient is a block sum added once, as the CPU's
 * push_partial rounds its broadcast total once. */
#include "cuda_common.cuh"

/* ---- the ops -------------------------------------------------------------------- */

struct add_op {
    __device__ static double f(double a, double b) { return a + b; }
    __device__ static double da(double, double) { return 1.0; }
    __device__ static double db(double, double) { return 1.0; }
};
struct sub_op {
    __device__ static double f(double a, double b) { return a - b; }
    __device__ static double da(double, double) { return 1.0; }
    __device__ static double db(double, double) { return -1.0; }
};
struct mul_op {
    __device__ static double f(double a, double b) { return a * b; }
    __device__ static double da(double, double b) { return b; }
    __device__ static double db(double a, double) { return a; }
};
struct div_op {
    __device__ static double f(double a, double b) { return a / b; }
    __device__ static double da(double, double b) { return 1.0 / b; }
    __device__ static double db(double a, double b) { return -a / (b * b); }
};
/* d/da is 0 where b == 0 (no 0 * inf at 0^0); d/db is 0 where a == 0. */
struct pow_op {
    __device__ static double f(double a, double b) { return pow(a, b); }
    __device__ static double da(double a, double b) { return b == 0.0 ? 0.0 : b * pow(a, b - 1.0); }
    __device__ static double db(double a, double b) { return a == 0.0 ? 0.0 : pow(a, b) * log(a); }
};

struct neg_op {
    __device__ static double f(double x) { return -x; }
    __device__ static double d(double) { return -1.0; }
};
struct exp_op {
    __device__ static double f(double x) { return exp(x); }
    __device__ static double d(double x) { return exp(x); }
};
struct log_op {
    __device__ static double f(double x) { return log(x); }
    __device__ static double d(double x) { return 1.0 / x; }
};
struct tanh_op {
    __device__ static double f(double x) { return tanh(x); }
    __device__ static double d(double x) { double t = tanh(x); return 1.0 - t * t; }
};
struct relu_op {
    __device__ static double f(double x) { return isnan(x) || x > 0.0 ? x : 0.0; }
    __device__ static double d(double x) { return x > 0.0 ? 1.0 : 0.0; }
};
struct abs_op {
    __device__ static double f(double x) { return fabs(x); }
    __device__ static double d(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : 0.0; }
};
/* the erf form, as ops_elementwise.c's CPU reference: 1/sqrt(2), 1/sqrt(2 pi) */
struct gelu_op {
    __device__ static double f(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); }
    __device__ static double d(double x)
    {
        return 0.5 * (1.0 + erf(x * 0.70710678118654752440)) + x * exp(-0.5 * x * x) * 0.39894228040143267794;
    }
};

/* ---- kernels ---------------------------------------------------------------------- */

/* The element of an operand of na elements that pairs with output element i. */
__device__ inline int64_t operand_index(int64_t na, int64_t i) { return na == 1 ? 0 : i; }

template <typename T, typename Op>
__global__ void binary_forward_kernel(const T *a, int64_t na, const T *b, int64_t nb, T *out,
                                      int64_t n)
{
    GRID_STRIDE(i, n)
    st(out, i, Op::f(ld(a, operand_index(na, i)), ld(b, operand_index(nb, i))));
}

/* The partial derivative of Op with respect to operand `which` (0: a, 1: b). */
template <typename Op, int which> __device__ double partial(double a, double b)
{
    return which == 0 ? Op::da(a, b) : Op::db(a, b);
}

/* g[i] += gout[i] * partial(a, b) for an operand that does not broadcast. */
template <typename T, typename Op, int which>
__global__ void binary_backward_kernel(const T *a, int64_t na, const T *b, int64_t nb,
                                       const T *gout, int64_t n, T *g)
{
    GRID_STRIDE(i, n) {
        double d = ld(gout, i) *
                   partial<Op, which>(ld(a, operand_index(na, i)), ld(b, operand_index(nb, i)));
        st(g, i, ld(g, i) + d);
    }
}

/* g[0] += sum_i gout[i] * partial(a, b): one block, for a broadcast operand. */
template <typename T, typename Op, int which>
__global__ void binary_backward_bcast_kernel(const T *a, int64_t na, const T *b, int64_t nb,
                                             const T *gout, int64_t n, T *g)
{
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        s += ld(gout, i) *
             partial<Op, which>(ld(a, operand_index(na, i)), ld(b, operand_index(nb, i)));
    s = block_reduce(s, sum_combine());
    if (threadIdx.x == 0)
        st(g, 0, ld(g, 0) + s);
}

template <typename T, typename Op>
__global__ void unary_forward_kernel(const T *a, T *out, int64_t n)
{
    GRID_STRIDE(i, n) st(out, i, Op::f(ld(a, i)));
}

template <typename T, typename Op>
__global__ void unary_backward_kernel(const T *a, const T *gout, T *ga, int64_t n)
{
    GRID_STRIDE(i, n) st(ga, i, ld(ga, i) + ld(gout, i) * Op::d(ld(a, i)));
}

template <typename T> __global__ void accumulate_kernel(T *dst, const T *src, int64_t n)
{
    GRID_STRIDE(i, n) st(dst, i, ld(dst, i) + ld(src, i));
}

/* Every thread that sees a zero writes the same 1: no atomics needed. */
template <typename T> __global__ void any_zero_kernel(const T *a, int64_t n, int *found)
{
    GRID_STRIDE(i, n) if (ld(a, i) == 0.0) *found = 1;
}

/* ---- host side -------------------------------------------------------------------- */

static const char *const binary_names[] = {"add", "sub", "mul", "div", "pow"};
static const char *const unary_names[] = {"neg", "exp", "log", "tanh", "relu", "abs", "gelu"};

/* An operand has n elements, or 1 that broadcasts; anything else would read
 * out of bounds. */
static int check_operands(const char *op, int64_t na, int64_t nb, int64_t n)
{
    if ((na == n || na == 1) && (nb == n || nb == 1) && n >= 0)
        return 0;
    return cg_error(cg_cuda_status(), "%s: operands of %lld and %lld elements do not give %lld", op,
                    (long long)na, (long long)nb, (long long)n);
}

template <typename Op>
static int binary_forward(const char *name, cg_dtype dt, const void *a, int64_t na, const void *b,
                          int64_t nb, void *out, int64_t n)
{
    if (check_operands(name, na, nb, n) != 0)
        return -1;
    if (n == 0)
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = binary_forward_kernel<T, Op>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)a, na, (const T *)b, nb, (T *)out, n);
        LAUNCHCHECK(name);
        return 0;
    });
}

/* Adds one operand's gradient into g (operand `which`, of ng elements). */
template <typename Op, int which>
static int push_partial(const char *name, cg_dtype dt, const void *a, int64_t na, const void *b,
                        int64_t nb, const void *gout, int64_t n, void *g, int64_t ng)
{
    bool broadcast = ng == 1 && n != 1;
    if (!g || (!broadcast && n == 0))
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        const T *ta = (const T *)a, *tb = (const T *)b, *tg = (const T *)gout;
        if (broadcast) {
            auto *k = binary_backward_bcast_kernel<T, Op, which>;
            CG_LAUNCH(k, 1, CG_CUDA_BLOCK, ta, na, tb, nb, tg, n, (T *)g);
        } else {
            auto *k = binary_backward_kernel<T, Op, which>;
            CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, ta, na, tb, nb, tg, n, (T *)g);
        }
        LAUNCHCHECK(name);
        return 0;
    });
}

/* a's gradient first, then b's, as the CPU does (they may be one buffer). */
template <typename Op>
static int binary_backward(const char *name, cg_dtype dt, const void *a, int64_t na, const void *b,
                           int64_t nb, const void *gout, int64_t n, void *ga, void *gb)
{
    if (check_operands(name, na, nb, n) ||
        push_partial<Op, 0>(name, dt, a, na, b, nb, gout, n, ga, na) ||
        push_partial<Op, 1>(name, dt, a, na, b, nb, gout, n, gb, nb))
        return -1;
    return 0;
}

template <typename Op>
static int unary_forward(const char *name, cg_dtype dt, const void *a, void *out, int64_t n)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = unary_forward_kernel<T, Op>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)a, (T *)out, n);
        LAUNCHCHECK(name);
        return 0;
    });
}

template <typename Op>
static int unary_backward(const char *name, cg_dtype dt, const void *a, const void *gout, void *ga,
                          int64_t n)
{
    if (n <= 0 || !ga)
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = unary_backward_kernel<T, Op>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)a, (const T *)gout, (T *)ga, n);
        LAUNCHCHECK(name);
        return 0;
    });
}

extern "C" {

int cg_cuda_binary(cg_cuda_binary_op op, cg_dtype dt, const void *a, int64_t na, const void *b,
                   int64_t nb, void *out, int64_t n)
{
    switch (op) {
    case CG_CUDA_ADD: return binary_forward<add_op>("add", dt, a, na, b, nb, out, n);
    case CG_CUDA_SUB: return binary_forward<sub_op>("sub", dt, a, na, b, nb, out, n);
    case CG_CUDA_MUL: return binary_forward<mul_op>("mul", dt, a, na, b, nb, out, n);
    case CG_CUDA_DIV: return binary_forward<div_op>("div", dt, a, na, b, nb, out, n);
    case CG_CUDA_POW: return binary_forward<pow_op>("pow", dt, a, na, b, nb, out, n);
    }
    return cg_error(cg_cuda_status(), "cg_cuda_binary: unknown op %d", (int)op);
}

int cg_cuda_binary_backward(cg_cuda_binary_op op, cg_dtype dt, const void *a, int64_t na,
                            const void *b, int64_t nb, const void *gout, int64_t n, void *ga,
                            void *gb)
{
    if ((unsigned)op > CG_CUDA_POW)
        return cg_error(cg_cuda_status(), "cg_cuda_binary_backward: unknown op %d", (int)op);
    const char *name = binary_names[op];
    switch (op) {
    case CG_CUDA_ADD: return binary_backward<add_op>(name, dt, a, na, b, nb, gout, n, ga, gb);
    case CG_CUDA_SUB: return binary_backward<sub_op>(name, dt, a, na, b, nb, gout, n, ga, gb);
    case CG_CUDA_MUL: return binary_backward<mul_op>(name, dt, a, na, b, nb, gout, n, ga, gb);
    case CG_CUDA_DIV: return binary_backward<div_op>(name, dt, a, na, b, nb, gout, n, ga, gb);
    case CG_CUDA_POW: return binary_backward<pow_op>(name, dt, a, na, b, nb, gout, n, ga, gb);
    }
    return -1;
}

int cg_cuda_unary(cg_cuda_unary_op op, cg_dtype dt, const void *a, void *out, int64_t n)
{
    if ((unsigned)op > CG_CUDA_GELU)
        return cg_error(cg_cuda_status(), "cg_cuda_unary: unknown op %d", (int)op);
    const char *name = unary_names[op];
    switch (op) {
    case CG_CUDA_NEG: return unary_forward<neg_op>(name, dt, a, out, n);
    case CG_CUDA_EXP: return unary_forward<exp_op>(name, dt, a, out, n);
    case CG_CUDA_LOG: return unary_forward<log_op>(name, dt, a, out, n);
    case CG_CUDA_TANH: return unary_forward<tanh_op>(name, dt, a, out, n);
    case CG_CUDA_RELU: return unary_forward<relu_op>(name, dt, a, out, n);
    case CG_CUDA_ABS: return unary_forward<abs_op>(name, dt, a, out, n);
    case CG_CUDA_GELU: return unary_forward<gelu_op>(name, dt, a, out, n);
    }
    return -1;
}

int cg_cuda_unary_backward(cg_cuda_unary_op op, cg_dtype dt, const void *a, const void *gout,
                           void *ga, int64_t n)
{
    if ((unsigned)op > CG_CUDA_GELU)
        return cg_error(cg_cuda_status(), "cg_cuda_unary_backward: unknown op %d", (int)op);
    const char *name = unary_names[op];
    switch (op) {
    case CG_CUDA_NEG: return unary_backward<neg_op>(name, dt, a, gout, ga, n);
    case CG_CUDA_EXP: return unary_backward<exp_op>(name, dt, a, gout, ga, n);
    case CG_CUDA_LOG: return unary_backward<log_op>(name, dt, a, gout, ga, n);
    case CG_CUDA_TANH: return unary_backward<tanh_op>(name, dt, a, gout, ga, n);
    case CG_CUDA_RELU: return unary_backward<relu_op>(name, dt, a, gout, ga, n);
    case CG_CUDA_ABS: return unary_backward<abs_op>(name, dt, a, gout, ga, n);
    case CG_CUDA_GELU: return unary_backward<gelu_op>(name, dt, a, gout, ga, n);
    }
    return -1;
}

int cg_cuda_accumulate(cg_dtype dt, void *dst, const void *src, int64_t n)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "accumulate", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = accumulate_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (T *)dst, (const T *)src, n);
        LAUNCHCHECK("accumulate");
        return 0;
    });
}

int cg_cuda_any_zero(cg_dtype dt, const void *a, int64_t n, int *found)
{
    *found = 0;
    if (n <= 0)
        return 0;
    int *flag = NULL;
    CUDACHECK(cudaMalloc((void **)&flag, sizeof *flag));
    int rc = dispatch(dt, "any_zero", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        CUDACHECK(cudaMemset(flag, 0, sizeof *flag));
        auto *k = any_zero_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)a, n, flag);
        LAUNCHCHECK("any_zero");
        CUDACHECK(cudaMemcpy(found, flag, sizeof *flag, cudaMemcpyDeviceToHost));
        return 0;
    });
    cudaFree(flag);
    return rc;
}

} /* extern "C" */
