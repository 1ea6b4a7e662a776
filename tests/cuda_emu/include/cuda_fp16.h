/* cuda_fp16.h — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md). NOT NVIDIA's header: the IEEE binary16 type and
 * the conversions harness/cuda uses, written here independently of the
 * project's own (harness/lang/dtype.c), so the kernels and the CPU reference do
 * not share a rounding routine. Round to nearest even; NaN becomes 0x7fff, as
 * CUDA's __float2half_rn gives, and widens to the canonical f32 NaN, as its
 * __half2float does (both checked bit for bit against the toolkit's host code
 * over every input). */
#ifndef CG_CUDA_EMU_FP16_H
#define CG_CUDA_EMU_FP16_H

#include <stdint.h>
#include <string.h>

typedef struct __half {
    unsigned short x;
} __half;

static inline unsigned short cg_emu_f32_to_f16_bits(float f)
{
    uint32_t x, sign, u, h, rem, half;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    u = x & 0x7fffffffu;
    if (u >= 0x7f800000u) /* infinity keeps its sign; NaN is CUDA's canonical one */
        return (unsigned short)(u == 0x7f800000u ? sign | 0x7c00u : 0x7fffu);
    if (u >= 0x477ff000u) /* 65520 and up round to infinity */
        return (unsigned short)(sign | 0x7c00u);
    if (u >= 0x38800000u) { /* normal: rebias the exponent, keep 10 bits */
        u -= 0x38000000u;
        h = u >> 13;
        rem = u & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
            h++; /* a carry into the exponent is right, up to infinity */
        return (unsigned short)(sign | h);
    }
    if (u <= 0x33000000u) /* at most 2^-25: rounds to (signed) zero */
        return (unsigned short)sign;
    /* subnormal: the significand in units of 2^-24 */
    uint32_t e = u >> 23, m = (u & 0x7fffffu) | 0x800000u, shift = 126u - e;
    h = m >> shift;
    rem = m & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (h & 1u)))
        h++;
    return (unsigned short)(sign | h);
}

static inline float cg_emu_f16_bits_to_f32(unsigned short h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 31u)
        bits = m ? 0x7fffffffu : sign | 0x7f800000u;
    else if (e != 0u)
        bits = sign | ((e + 112u) << 23) | (m << 13);
    else if (m == 0u)
        bits = sign;
    else { /* subnormal: normalize */
        e = 113u;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        bits = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline __half __float2half_rn(float f)
{
    __half r;
    r.x = cg_emu_f32_to_f16_bits(f);
    return r;
}
static inline __half __float2half(float f) { return __float2half_rn(f); }
static inline float __half2float(__half h) { return cg_emu_f16_bits_to_f32(h.x); }

#endif
