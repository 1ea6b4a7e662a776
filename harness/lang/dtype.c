/* dtype.c — element types: names, sizes, rounding and the half formats.
 *
 * The oracle always computes in f64, but the inputs it starts from are first
 * rounded to the case's dtype (cg_round_to), so the distributed run and the
 * oracle see bit-identical inputs and differ only by arithmetic rounding. */
#include "dtype.h"

#include <math.h>
#include <string.h>

static const char *const dtype_names[] = {"f32", "f64", "bf16", "f16"};

const char *cg_dtype_name(cg_dtype dt)
{
    return (unsigned)dt < 4 ? dtype_names[dt] : "?";
}

int cg_dtype_parse(const char *s, cg_dtype *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, dtype_names[i]) == 0) {
            *out = (cg_dtype)i;
            return 0;
        }
    return -1;
}

size_t cg_dtype_size(cg_dtype dt)
{
    switch (dt) {
    case CG_F32: return 4;
    case CG_F64: return 8;
    case CG_BF16:
    case CG_F16: return 2;
    }
    return 0;
}

double cg_dtype_eps(cg_dtype dt)
{
    switch (dt) {
    case CG_F32: return 0x1p-23;
    case CG_F64: return 0x1p-52;
    case CG_BF16: return 0x1p-7;
    case CG_F16: return 0x1p-10;
    }
    return 0.0;
}

double cg_round_to(cg_dtype dt, double v)
{
    switch (dt) {
    case CG_F32: return (float)v;
    case CG_F64: return v;
    case CG_BF16: return cg_bf16_to_f32(cg_f32_to_bf16((float)v));
    case CG_F16: return cg_f16_to_f32(cg_f32_to_f16((float)v));
    }
    return v;
}

/* bf16 is the top half of an f32: round the low 16 bits to nearest even. */
uint16_t cg_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet, keep the sign */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float cg_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* IEEE binary16 through exact double arithmetic: scale into the format's
 * range and let nearbyint do round-to-nearest-even on the significand. */
uint16_t cg_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    double a = fabs((double)f);
    if (isnan(f))
        return (uint16_t)(sign | 0x7e00u);
    if (a >= 65520.0) /* rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x1p-14) { /* subnormal or zero: units of 2^-24 */
        double m = nearbyint(a * 0x1p24);
        return (uint16_t)(sign | (uint16_t)m);
    }
    int e;
    double fr = frexp(a, &e);              /* a = fr * 2^e, fr in [0.5, 1) */
    double m = nearbyint(fr * 2048.0);      /* 11 significant bits */
    if (m == 2048.0) {
        m = 1024.0;
        e++;
    }
    int exp16 = e - 1 + 15;
    if (exp16 >= 31)
        return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | (uint16_t)(exp16 << 10) | (uint16_t)((int)m - 1024));
}

float cg_f16_to_f32(uint16_t h)
{
    int sign = (h & 0x8000u) ? -1 : 1;
    int exp16 = (h >> 10) & 0x1f;
    int mant = h & 0x3ff;
    double v;
    if (exp16 == 0)
        v = ldexp((double)mant, -24);
    else if (exp16 == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexp((double)(mant + 1024), exp16 - 25);
    return (float)(sign * v);
}
