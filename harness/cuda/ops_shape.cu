/* ops_shape.cu — the device twin of ops_shape.c: transpose, cat, slice and
 * index as copies (cuda_ops.h). reshape, clone and detach need no kernel:
 * their forward is cg_cuda_copy and their backward cg_cuda_accumulate.
 *
 * Each forward copies elements to their new place; each backward adds the
 * output gradient back where the elements came from. Every destination
 * element has exactly one source, so no two threads write the same place. */
#include "cuda_common.cuh"

/* dst(b, c, r) = or += src(b, r, c) for src viewed as [batch, rows, cols]. */
template <typename T, bool accumulate>
__global__ void transpose_kernel(const T *src, int64_t batch, int64_t rows, int64_t cols, T *dst)
{
    GRID_STRIDE(i, batch * rows * cols) {
        int64_t c = i % cols, r = (i / cols) % rows, b = i / (rows * cols);
        int64_t to = (b * cols + c) * rows + r;
        st(dst, to, accumulate ? ld(dst, to) + ld(src, i) : ld(src, i));
    }
}

/* For o < outer and e < chunk: dst[o*dst_stride + dst_off + e] = (or +=)
 * src[o*src_stride + src_off + e]. cat, slice and index are all this copy of
 * `outer` runs of `chunk` contiguous elements between two strided layouts;
 * accumulate = false is their forward, true their backward. */
template <typename T, bool accumulate>
__global__ void block_copy_kernel(const T *src, int64_t src_stride, int64_t src_off, T *dst,
                                  int64_t dst_stride, int64_t dst_off, int64_t outer,
                                  int64_t chunk)
{
    GRID_STRIDE(i, outer * chunk) {
        int64_t o = i / chunk, e = i % chunk;
        int64_t from = o * src_stride + src_off + e, to = o * dst_stride + dst_off + e;
        st(dst, to, accumulate ? ld(dst, to) + ld(src, from) : ld(src, from));
    }
}

/* One side of a block copy: a buffer, its row stride and its offset. */
struct side {
    const void *buf;
    int64_t stride, off;
};

template <bool accumulate>
static int block_copy(const char *name, cg_dtype dt, side src, side dst, int64_t outer,
                      int64_t chunk)
{
    if (outer <= 0 || chunk <= 0)
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = block_copy_kernel<T, accumulate>;
        CG_LAUNCH(k, grid_for(outer * chunk), CG_CUDA_BLOCK, (const T *)src.buf, src.stride,
                  src.off, (T *)dst.buf, dst.stride, dst.off, outer, chunk);
        LAUNCHCHECK(name);
        return 0;
    });
}

template <bool accumulate>
static int transpose(const char *name, cg_dtype dt, const void *src, int64_t batch, int64_t rows,
                     int64_t cols, void *dst)
{
    if (batch <= 0 || rows <= 0 || cols <= 0)
        return 0;
    return dispatch(dt, name, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        auto *k = transpose_kernel<T, accumulate>;
        CG_LAUNCH(k, grid_for(batch * rows * cols), CG_CUDA_BLOCK, (const T *)src, batch, rows,
                  cols, (T *)dst);
        LAUNCHCHECK(name);
        return 0;
    });
}

extern "C" {

int cg_cuda_transpose(cg_dtype dt, const void *a, int64_t batch, int64_t rows, int64_t cols,
                      void *out)
{
    return transpose<false>("transpose", dt, a, batch, rows, cols, out);
}

/* gout has the output's shape [batch, cols, rows]; its transpose is a's. */
int cg_cuda_transpose_backward(cg_dtype dt, const void *gout, int64_t batch, int64_t rows,
                               int64_t cols, void *ga)
{
    if (!ga)
        return 0;
    return transpose<true>("transpose backward", dt, gout, batch, cols, rows, ga);
}

/* Input j fills columns [offset_j, offset_j + widths[j]) of every outer row. */
int cg_cuda_cat(cg_dtype dt, const void *const *xs, const int64_t *widths, int n, int64_t outer,
                int64_t inner, void *out)
{
    int64_t total = 0, offset = 0;
    for (int j = 0; j < n; j++)
        total += widths[j];
    for (int j = 0; j < n; j++) {
        int64_t chunk = widths[j] * inner;
        side src = {xs[j], chunk, 0}, dst = {out, total * inner, offset * inner};
        if (block_copy<false>("cat", dt, src, dst, outer, chunk) != 0)
            return -1;
        offset += widths[j];
    }
    return 0;
}

int cg_cuda_cat_backward(cg_dtype dt, const void *gout, const int64_t *widths, int n,
                         int64_t outer, int64_t inner, void *const *gxs)
{
    int64_t total = 0, offset = 0;
    for (int j = 0; j < n; j++)
        total += widths[j];
    for (int j = 0; j < n; j++) {
        int64_t chunk = widths[j] * inner;
        side src = {gout, total * inner, offset * inner}, dst = {gxs[j], chunk, 0};
        if (gxs[j] && block_copy<true>("cat backward", dt, src, dst, outer, chunk) != 0)
            return -1;
        offset += widths[j];
    }
    return 0;
}

int cg_cuda_slice(cg_dtype dt, cg_cuda_axis v, int64_t start, int64_t width, const void *a,
                  void *out)
{
    if (start < 0 || width < 0 || start + width > v.len)
        return cg_error(cg_cuda_status(), "slice: [%lld, %lld) is outside an axis of %lld",
                        (long long)start, (long long)(start + width), (long long)v.len);
    side src = {a, v.len * v.inner, start * v.inner}, dst = {out, width * v.inner, 0};
    return block_copy<false>("slice", dt, src, dst, v.outer, width * v.inner);
}

int cg_cuda_slice_backward(cg_dtype dt, cg_cuda_axis v, int64_t start, int64_t width,
                           const void *gout, void *ga)
{
    if (start < 0 || width < 0 || start + width > v.len)
        return cg_error(cg_cuda_status(), "slice backward: [%lld, %lld) is outside an axis of %lld",
                        (long long)start, (long long)(start + width), (long long)v.len);
    side src = {gout, width * v.inner, 0}, dst = {ga, v.len * v.inner, start * v.inner};
    return ga ? block_copy<true>("slice backward", dt, src, dst, v.outer, width * v.inner) : 0;
}

/* a[i] is the slice [i, i+1) of axis 0 with nothing outside it. */
int cg_cuda_index(cg_dtype dt, const void *a, int64_t len, int64_t block, int64_t i, void *out)
{
    cg_cuda_axis v = {1, len, block};
    return cg_cuda_slice(dt, v, i, 1, a, out);
}

int cg_cuda_index_backward(cg_dtype dt, const void *gout, int64_t len, int64_t block, int64_t i,
                           void *ga)
{
    cg_cuda_axis v = {1, len, block};
    return cg_cuda_slice_backward(dt, v, i, 1, gout, ga);
}

} /* extern "C" */
