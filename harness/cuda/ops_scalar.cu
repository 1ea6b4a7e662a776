/* ops_scalar.cu — whole-tensor updates by one number, and dtype conversion
 * (cuda_ops.h). The device twins of tensor_math.c's host loops: autograd's
 * seed (dL/dL = 1 added into a root's gradient), the rule sets' scaling by
 * 1/world, and cg_tensor_cast. Like every kernel here, elements are widened
 * to double and rounded once into the destination's dtype. */
#include "cuda_common.cuh"

template <typename T> __global__ void add_scalar_kernel(T *dst, int64_t n, double v)
{
    GRID_STRIDE(i, n) st(dst, i, ld(dst, i) + v);
}

template <typename T> __global__ void mul_scalar_kernel(T *dst, int64_t n, double v)
{
    GRID_STRIDE(i, n) st(dst, i, ld(dst, i) * v);
}

template <typename T> __global__ void div_scalar_kernel(T *dst, int64_t n, double v)
{
    GRID_STRIDE(i, n) st(dst, i, ld(dst, i) / v);
}

template <typename To, typename From>
__global__ void convert_kernel(To *dst, const From *src, int64_t n)
{
    GRID_STRIDE(i, n) st(dst, i, ld(src, i));
}

extern "C" {

int cg_cuda_add_scalar(cg_dtype dt, void *dst, int64_t n, double v)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "add_scalar", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = add_scalar_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (T *)dst, n, v);
        LAUNCHCHECK("add_scalar");
        return 0;
    });
}

int cg_cuda_mul_scalar(cg_dtype dt, void *dst, int64_t n, double v)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "mul_scalar", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = mul_scalar_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (T *)dst, n, v);
        LAUNCHCHECK("mul_scalar");
        return 0;
    });
}

int cg_cuda_div_scalar(cg_dtype dt, void *dst, int64_t n, double v)
{
    if (n <= 0)
        return 0;
    return dispatch(dt, "div_scalar", [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = div_scalar_kernel<T>;
        CG_LAUNCH(k, grid_for(n), CG_CUDA_BLOCK, (T *)dst, n, v);
        LAUNCHCHECK("div_scalar");
        return 0;
    });
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
