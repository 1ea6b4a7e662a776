/* ops_reduce.cu — the device twin of ops_reduce.c: sum, mean, logsumexp and
 * log_softmax along an axis, and the elementwise extremum of n tensors
 * (cuda_ops.h).
 *
 * A reduction sees its input as [outer, len, inner] and output row
 * r = o * inner + j collects the elements (o, k, j), k < len. One block works
 * on one row at a time: each thread sums a strided share in double, then a
 * block_reduce combines the shares. Sums therefore associate differently
 * from the CPU's left-to-right loop (both in double, before the one rounding
 * into the dtype). logsumexp keeps (shift, sum) apart as the CPU does, so
 * softmax never goes through a rounded logsumexp. */
#include "cuda_common.cuh"

/* ---- rows ------------------------------------------------------------------------- */

/* Flat index of element k of row r. */
__device__ inline int64_t row_at(cg_cuda_axis v, int64_t row, int64_t k)
{
    int64_t o = row / v.inner, j = row % v.inner;
    return (o * v.len + k) * v.inner + j;
}

/* The row's max as shift (0 when infinite, so inf - inf never makes nan) and
 * sum_k exp(a_k - shift); the CPU's row_lse. All threads must call it. */
template <typename T>
__device__ void row_lse(const T *a, cg_cuda_axis v, int64_t row, double *shift, double *sum)
{
    double m = -INFINITY;
    for (int64_t k = threadIdx.x; k < v.len; k += blockDim.x)
        m = fmax(m, ld(a, row_at(v, row, k)));
    m = block_reduce(m, max_combine());
    *shift = isinf(m) ? 0.0 : m;
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < v.len; k += blockDim.x)
        s += exp(ld(a, row_at(v, row, k)) - *shift);
    *sum = block_reduce(s, sum_combine());
}

/* ---- kernels ---------------------------------------------------------------------- */

/* out[r] = sum_k a(r, k); the mean divides by len (nan for len 0). */
template <typename T>
__global__ void sum_forward_kernel(const T *a, cg_cuda_axis v, int mean, T *out)
{
    BLOCK_PER_ROW(row, v.outer * v.inner) {
        double s = 0.0;
        for (int64_t k = threadIdx.x; k < v.len; k += blockDim.x)
            s += ld(a, row_at(v, row, k));
        s = block_reduce(s, sum_combine());
        if (threadIdx.x == 0)
            st(out, row, mean ? s / (double)v.len : s);
    }
}

/* ga(o, k, j) += scale * gout(o, j), one thread per input element. */
template <typename T>
__global__ void sum_backward_kernel(const T *gout, cg_cuda_axis v, double scale, T *ga)
{
    GRID_STRIDE(i, v.outer * v.len * v.inner) {
        int64_t j = i % v.inner, o = i / (v.len * v.inner);
        st(ga, i, ld(ga, i) + scale * ld(gout, o * v.inner + j));
    }
}

template <typename T> __global__ void logsumexp_forward_kernel(const T *a, cg_cuda_axis v, T *out)
{
    BLOCK_PER_ROW(row, v.outer * v.inner) {
        double shift, sum;
        row_lse(a, v, row, &shift, &sum);
        if (threadIdx.x == 0)
            st(out, row, shift + log(sum));
    }
}

/* ga(r, k) += gout(r) * softmax(r, k). */
template <typename T>
__global__ void logsumexp_backward_kernel(const T *a, cg_cuda_axis v, const T *gout, T *ga)
{
    BLOCK_PER_ROW(row, v.outer * v.inner) {
        double shift, sum;
        row_lse(a, v, row, &shift, &sum);
        double d = ld(gout, row) / sum;
        for (int64_t k = threadIdx.x; k < v.len; k += blockDim.x) {
            int64_t i = row_at(v, row, k);
            st(ga, i, ld(ga, i) + d * exp(ld(a, i) - shift));
        }
    }
}

template <typename T>
__global__ void log_softmax_forward_kernel(const T *a, cg_cuda_axis v, T *out)
{
    BLOCK_PER_ROW(row, v.outer * v.inner) {
        double shift, sum;
        row_lse(a, v, row, &shift, &sum);
        double log_sum = log(sum);
        for (int64_t k = threadIdx.x; k < v.len; k += blockDim.x) {
            int64_t i = row_at(v, row, k);
            st(out, i, (ld(a, i) - shift) - log_sum);
        }
    }
}

/* ga(r, k) += gout(r, k) - softmax(r, k) * sum_k' gout(r, k'). */
template <typename T>
__global__ void log_softmax_backward_kernel(const T *a, cg_cuda_axis v, const T *gout, T *ga)
{
    BLOCK_PER_ROW(row, v.outer * v.inner) {
        double shift, sum, gsum = 0.0;
        row_lse(a, v, row, &shift, &sum);
        for (int64_t k = threadIdx.x; k < v.len; k += blockDim.x)
            gsum += ld(gout, row_at(v, row, k));
        gsum = block_reduce(gsum, sum_combine());
        for (int64_t k = threadIdx.x; k < v.len; k += blockDim.x) {
            int64_t i = row_at(v, row, k);
            st(ga, i, ld(ga, i) + (ld(gout, i) - exp(ld(a, i) - shift) / sum * gsum));
        }
    }
}

/* The inputs of maxn/minn travel by value in the kernel's parameters. */
struct input_pack {
    const void *p[CG_CUDA_MAX_INPUTS];
};
struct grad_pack {
    void *p[CG_CUDA_MAX_INPUTS];
};

/* An input attains the extremum y (nan attains a nan y). */
__device__ inline bool attains(double x, double y) { return x == y || (isnan(x) && isnan(y)); }

/* out(i) = the max (sign 1) or min (sign -1) over the inputs, nan winning;
 * *tie = 1 where two inputs attain it (every writer writes the same 1). */
template <typename T>
__global__ void extremum_forward_kernel(input_pack xs, int n, int64_t numel, double sign, T *out,
                                        int *tie)
{
    GRID_STRIDE(i, numel) {
        double y = ld((const T *)xs.p[0], i);
        for (int j = 1; j < n; j++) {
            double x = ld((const T *)xs.p[j], i);
            if (!isnan(y) && (isnan(x) || sign * x > sign * y))
                y = x;
        }
        int winners = 0;
        for (int j = 0; j < n; j++)
            winners += attains(ld((const T *)xs.p[j], i), y);
        if (winners > 1)
            *tie = 1;
        st(out, i, y);
    }
}

/* gxs[j](i) += gout(i) / #winners(i) for every input j attaining out(i); out
 * holds an input's exact value, so equality finds the winners. */
template <typename T>
__global__ void extremum_backward_kernel(input_pack xs, int n, int64_t numel, const T *out,
                                         const T *gout, grad_pack gxs)
{
    GRID_STRIDE(i, numel) {
        double y = ld(out, i);
        int winners = 0;
        for (int j = 0; j < n; j++)
            winners += attains(ld((const T *)xs.p[j], i), y);
        double share = ld(gout, i) / winners;
        for (int j = 0; j < n; j++) {
            T *g = (T *)gxs.p[j];
            if (g && attains(ld((const T *)xs.p[j], i), y))
                st(g, i, ld(g, i) + share);
        }
    }
}

/* ---- host side -------------------------------------------------------------------- */

/* Blocks for a row kernel; 0 rows launch nothing. */
static unsigned row_grid(cg_cuda_axis v)
{
    int64_t rows = v.outer * v.inner;
    return rows > 65535 ? 65535u : (unsigned)rows;
}

static int sum_forward(const char *name, cg_dtype dt, cg_cuda_axis v, const void *a, void *out,
                       int mean)
{
    if (row_grid(v) == 0)
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = sum_forward_kernel<T>;
        CG_LAUNCH(k, row_grid(v), CG_CUDA_BLOCK, (const T *)a, v, mean, (T *)out);
        LAUNCHCHECK(name);
        return 0;
    });
}

static int sum_backward(const char *name, cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga,
                        double scale)
{
    int64_t n = v.outer * v.len * v.inner;
    if (n == 0 || !ga)
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = sum_backward_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)gout, v, scale, (T *)ga);
        LAUNCHCHECK(name);
        return 0;
    });
}

/* Checks the inputs of maxn/minn and packs their pointers. */
static int pack_inputs(const char *name, const void *const *xs, int n, input_pack *pack)
{
    if (n < 1 || n > CG_CUDA_MAX_INPUTS)
        return cg_error(cg_cuda_status(), "%s: expected 1 to %d inputs, got %d", name,
                        CG_CUDA_MAX_INPUTS, n);
    for (int j = 0; j < n; j++)
        pack->p[j] = xs[j];
    return 0;
}

static int extremum_forward(const char *name, cg_dtype dt, const void *const *xs, int n,
                            int64_t numel, double sign, void *out, int *tie)
{
    input_pack pack = {};
    int found = 0, *flag = NULL;
    if (pack_inputs(name, xs, n, &pack) != 0)
        return -1;
    if (numel > 0) {
        CUDACHECK(cudaMalloc((void **)&flag, sizeof *flag));
        int rc = dispatch(dt, name, [&](auto tag) {
            typedef typename decltype(tag)::type T;
            CUDACHECK(cudaMemset(flag, 0, sizeof *flag));
            auto *k = extremum_forward_kernel<T>;
            CG_LAUNCH(k, grid_for(numel), CG_CUDA_BLOCK, pack, n, numel, sign, (T *)out, flag);
            LAUNCHCHECK(name);
            CUDACHECK(cudaMemcpy(&found, flag, sizeof found, cudaMemcpyDeviceToHost));
            return 0;
        });
        cudaFree(flag);
        if (rc != 0)
            return -1;
    }
    if (tie)
        *tie = found;
    return 0;
}

extern "C" {

int cg_cuda_sum(cg_dtype dt, cg_cuda_axis v, const void *a, void *out)
{
    return sum_forward("sum", dt, v, a, out, 0);
}

int cg_cuda_sum_backward(cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga)
{
    return sum_backward("sum backward", dt, v, gout, ga, 1.0);
}

int cg_cuda_mean(cg_dtype dt, cg_cuda_axis v, const void *a, void *out)
{
    return sum_forward("mean", dt, v, a, out, 1);
}

int cg_cuda_mean_backward(cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga)
{
    return sum_backward("mean backward", dt, v, gout, ga, 1.0 / (double)v.len);
}

int cg_cuda_logsumexp(cg_dtype dt, cg_cuda_axis v, const void *a, void *out)
{
    if (row_grid(v) == 0)
        return 0;
    return dispatch(dt, "logsumexp", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = logsumexp_forward_kernel<T>;
        CG_LAUNCH(k, row_grid(v), CG_CUDA_BLOCK, (const T *)a, v, (T *)out);
        LAUNCHCHECK("logsumexp");
        return 0;
    });
}

int cg_cuda_logsumexp_backward(cg_dtype dt, cg_cuda_axis v, const void *a, const void *gout,
                               void *ga)
{
    if (row_grid(v) == 0 || !ga)
        return 0;
    return dispatch(dt, "logsumexp backward", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = logsumexp_backward_kernel<T>;
        CG_LAUNCH(k, row_grid(v), CG_CUDA_BLOCK, (const T *)a, v, (const T *)gout, (T *)ga);
        LAUNCHCHECK("logsumexp backward");
        return 0;
    });
}

int cg_cuda_log_softmax(cg_dtype dt, cg_cuda_axis v, const void *a, void *out)
{
    if (row_grid(v) == 0)
        return 0;
    return dispatch(dt, "log_softmax", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = log_softmax_forward_kernel<T>;
        CG_LAUNCH(k, row_grid(v), CG_CUDA_BLOCK, (const T *)a, v, (T *)out);
        LAUNCHCHECK("log_softmax");
        return 0;
    });
}

int cg_cuda_log_softmax_backward(cg_dtype dt, cg_cuda_axis v, const void *a, const void *gout,
                                 void *ga)
{
    if (row_grid(v) == 0 || !ga)
        return 0;
    return dispatch(dt, "log_softmax backward", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = log_softmax_backward_kernel<T>;
        CG_LAUNCH(k, row_grid(v), CG_CUDA_BLOCK, (const T *)a, v, (const T *)gout, (T *)ga);
        LAUNCHCHECK("log_softmax backward");
        return 0;
    });
}

int cg_cuda_maxn(cg_dtype dt, const void *const *xs, int n, int64_t numel, void *out, int *tie)
{
    return extremum_forward("maxn", dt, xs, n, numel, 1.0, out, tie);
}

int cg_cuda_minn(cg_dtype dt, const void *const *xs, int n, int64_t numel, void *out, int *tie)
{
    return extremum_forward("minn", dt, xs, n, numel, -1.0, out, tie);
}

int cg_cuda_extremum_backward(cg_dtype dt, const void *const *xs, int n, int64_t numel,
                              const void *out, const void *gout, void *const *gxs)
{
    input_pack pack = {};
    grad_pack grads = {};
    if (pack_inputs("extremum backward", xs, n, &pack) != 0)
        return -1;
    if (numel <= 0)
        return 0;
    for (int j = 0; j < n; j++)
        grads.p[j] = gxs[j];
    return dispatch(dt, "extremum backward", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = extremum_backward_kernel<T>;
        CG_LAUNCH(k, grid_for(numel), CG_CUDA_BLOCK, pack, n, numel, (const T *)out,
                  (const T *)gout, grads);
        LAUNCHCHECK("extremum backward");
        return 0;
    });
}

} /* extern "C" */
