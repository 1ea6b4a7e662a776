/* rules_local.cu — the device twin of rules_local.c: the arithmetic rule
 * sets do on their own rank between collectives (cuda_ops.h). The formulas
 * themselves are rules_local_math.h, shared with the CPU loops. Masks and
 * counts that cross the transport are f64, as on the host. */
#include "cuda_common.cuh"

#include "rules_local_math.h"

template <typename T>
__global__ void prod_split_kernel(const T *x, int64_t n, double *zeros, double *nonzero)
{
    GRID_STRIDE(e, n)
    {
        double v = ld(x, e);
        zeros[e] = v == 0.0 ? 1.0 : 0.0;
        nonzero[e] = v == 0.0 ? 1.0 : v;
    }
}

template <typename T>
__global__ void prod_scale_kernel(const T *x, const double *zeros, const double *nonzero, T *gx,
                                  int64_t n)
{
    GRID_STRIDE(e, n) st(gx, e, ld(gx, e) * cg_prod_of_others(ld(x, e), zeros[e], nonzero[e]));
}

template <typename T> __global__ void equal_mask_kernel(const T *x, const T *m, int64_t n, double *mask)
{
    GRID_STRIDE(e, n) mask[e] = ld(x, e) == ld(m, e) ? 1.0 : 0.0;
}

template <typename T>
__global__ void tie_scale_kernel(const T *x, const T *m, const double *ties, T *gx, int64_t n)
{
    GRID_STRIDE(e, n) st(gx, e, ld(gx, e) * cg_tie_share(ld(x, e), ld(m, e), ties[e]));
}

/* gx = f(gy, x, y) elementwise, f one of the torch_xla formulas. */
template <typename T, bool prod>
__global__ void xla_grad_kernel(const T *gy, const T *x, const T *y, T *gx, int64_t n)
{
    GRID_STRIDE(e, n)
    {
        double g = ld(gy, e), in = ld(x, e), out = ld(y, e);
        st(gx, e, prod ? cg_xla_prod_grad(g, in, out) : cg_xla_extremum_grad(g, in, out));
    }
}

extern "C" {

int cg_cuda_prod_split(cg_dtype dt, const void *x, int64_t n, double *zeros, double *nonzero)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "prod_split", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = prod_split_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)x, n, zeros, nonzero);
        LAUNCHCHECK("prod_split");
        return 0;
    });
}

int cg_cuda_prod_scale(cg_dtype dt, const void *x, const double *zeros, const double *nonzero,
                       void *gx, int64_t n)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "prod_scale", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = prod_scale_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)x, zeros, nonzero, (T *)gx, n);
        LAUNCHCHECK("prod_scale");
        return 0;
    });
}

int cg_cuda_equal_mask(cg_dtype dt, const void *x, const void *m, int64_t n, double *mask)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "equal_mask", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = equal_mask_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)x, (const T *)m, n, mask);
        LAUNCHCHECK("equal_mask");
        return 0;
    });
}

int cg_cuda_tie_scale(cg_dtype dt, const void *x, const void *m, const double *ties, void *gx,
                      int64_t n)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "tie_scale", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = tie_scale_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)x, (const T *)m, ties, (T *)gx, n);
        LAUNCHCHECK("tie_scale");
        return 0;
    });
}

int cg_cuda_xla_grad(cg_dtype dt, int prod, const void *gy, const void *x, const void *y, void *gx,
                     int64_t n)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "xla_grad", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = prod ? xla_grad_kernel<T, true> : xla_grad_kernel<T, false>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (const T *)gy, (const T *)x, (const T *)y,
                  (T *)gx, n);
        LAUNCHCHECK("xla_grad");
        return 0;
    });
}

} /* extern "C" */
