/* cuda_bf16.h — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md). NOT NVIDIA's header: bfloat16 and the
 * conversions harness/cuda uses, independent of harness/lang/dtype.c. Round to
 * nearest even; NaN becomes 0x7fff, as CUDA's __float2bfloat16_rn gives. */
#ifndef CG_CUDA_EMU_BF16_H
#define CG_CUDA_EMU_BF16_H

#include <stdint.h>
#include <string.h>

typedef struct __nv_bfloat16 {
    unsigned short x;
} __nv_bfloat16;

static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    uint32_t x, h, rem;
    __nv_bfloat16 r;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        r.x = 0x7fffu;
        return r;
    }
    h = x >> 16; /* bf16 is the top half of an f32 */
    rem = x & 0xffffu;
    if (rem > 0x8000u || (rem == 0x8000u && (h & 1u)))
        h++;
    r.x = (unsigned short)h;
    return r;
}
static inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }

static inline float __bfloat162float(__nv_bfloat16 h)
{
    uint32_t bits = (uint32_t)h.x << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

#endif
