/* rng.c — see rng.h. The mixer is the splitmix64 finalizer: a bijection on
 * 64-bit words with full avalanche, cheap enough to call per element. */
#include "rng.h"

#include <math.h>

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t cg_fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t cg_rng_key(uint64_t seed, int rank, const char *name)
{
    return mix64(mix64(seed) ^ mix64((uint64_t)rank + 0x9e3779b97f4a7c15ULL) ^ cg_fnv1a64(name));
}

static uint64_t draw(uint64_t key, int64_t index)
{
    return mix64(key + ((uint64_t)index + 1) * 0x9e3779b97f4a7c15ULL);
}

static int significand_bits(cg_dtype dt)
{
    switch (dt) {
    case CG_BF16: return 8;
    case CG_F16: return 11;
    default: return 24; /* f32 and f64 share f32-exact inputs */
    }
}

double cg_rng_uniform(uint64_t key, int64_t index, cg_dtype dt)
{
    int p = significand_bits(dt);
    return ldexp((double)(draw(key, index) >> (64 - p)), -p);
}

double cg_rng_normal(uint64_t key, int64_t index, cg_dtype dt)
{
    /* two independent 53-bit uniforms from two counters; u1 in (0, 1] */
    double u1 = ((double)(draw(key, 2 * index) >> 11) + 1.0) * 0x1p-53;
    double u2 = (double)(draw(key, 2 * index + 1) >> 11) * 0x1p-53;
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
    return cg_round_to(dt, z);
}
