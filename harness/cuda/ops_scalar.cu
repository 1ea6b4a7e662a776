/* ops_scalar.cu — whole-tensor updates by one number, and dtype conversion
 * (cuda_ops.h). The device twins of tensor_math.c's host loops: autograd's
 * seed (dL/dL = 1 added into a root's gradient), the rule sets' scaling by
 * 1/world, and cg_tensor_cast. Like every kernel here, elements are widened
 * to double and rounded once into the destination's dtype. */
#include "cuda_common.cuh"

struct add_by {
    __device__ static double f(double x, double v) { return x + v; }
};
struct mul_by {
    __device__ static double f(double x, double v) { return x * v; }
};
struct div_by {
    __device__ static double f(double x, double v) { return x / v; }
};

template <typename T, typename Op> __global__ void scalar_kernel(T *dst, int64_t n, double v)
{
    GRID_STRIDE(i, n) st(dst, i, Op::f(ld(dst, i), v));
}

/* dst[i] = Op::f(dst[i], v) for every element, in dst's dtype. */
template <typename Op>
static int scalar_update(const char *name, cg_dtype dt, void *dst, int64_t n, double v)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = scalar_kernel<T, Op>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (T *)dst, n, v);
        LAUNCHCHECK(name);
        return 0;
    });
}

template <typename To, typename From>
__global__ void convert_kernel(To *dst, const From *src, int64_t n)
{
    GRID_STRIDE(i, n) st(dst, i, ld(src, i));
}

extern "C" {

int cg_cuda_add_scalar(cg_dtype dt, void *dst, int64_t n, double v)
{
    return scalar_update<add_by>("add_scalar", dt, dst, n, v);
}

int cg_cuda_mul_scalar(cg_dtype dt, void *dst, int64_t n, double v)
{
    return scalar_update<mul_by>("mul_scalar", dt, dst, n, v);
}

int cg_cuda_div_scalar(cg_dtype dt, void *dst, int64_t n, double v)
{
    return scalar_update<div_by>("div_scalar", dt, dst, n, v);
}

int cg_cuda_convert(cg_dtype to, void *dst, cg_dtype from, const void *src, int64_t n)
{
    if (n <= 0)
        return 0;
    return dispatch(to, "convert", [&](auto to_tag) {
        typedef typename decltype(to_tag)::type To;
        return dispatch(from, "convert", [&](auto from_tag) {
            typedef typename decltype(from_tag)::type From;
            auto *k = convert_kernel<To, From>;
            CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (To *)dst, (const From *)src, n);
            LAUNCHCHECK("convert");
            return 0;
        });
    });
}

} /* extern "C" */
