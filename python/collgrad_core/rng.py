"""Counter-based random inputs, bit for bit those of harness/autograd/rng.c.

A value depends only on (case seed, rank, key name, element index): the C
oracle and every rank draw the same inputs without talking. The arithmetic
is unsigned 64-bit (Python ints masked to 64 bits); the normal draw calls
the same libm ``log``/``cos``/``sqrt`` as the C code, through ``math``.
"""

import math

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def mix64(z: int) -> int:
    """The splitmix64 finalizer (a bijection on 64-bit words)."""
    z &= _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def fnv1a64(text: str) -> int:
    """FNV-1a 64-bit of the UTF-8 bytes of text (the default case seed)."""
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & _MASK
    return h


def key(seed: int, rank: int, name: str) -> int:
    """The stream of one random tensor: cg_rng_key."""
    return mix64(mix64(seed) ^ mix64(rank + _GOLDEN) ^ fnv1a64(name))


def _draw(k: int, index: int) -> int:
    return mix64(k + ((index + 1) * _GOLDEN))


_SIGNIFICAND_BITS = {"bf16": 8, "f16": 11}


def uniform(k: int, index: int, dtype: str) -> float:
    """Uniform in [0, 1), a multiple of 2**-p exact in dtype (p: f32 and f64 24)."""
    p = _SIGNIFICAND_BITS.get(dtype, 24)
    return math.ldexp(float(_draw(k, index) >> (64 - p)), -p)


def normal(k: int, index: int) -> float:
    """Standard normal by Box-Muller on two counters, in float64; the caller
    rounds it to the case dtype as cg_round_to does."""
    u1 = (float(_draw(k, 2 * index) >> 11) + 1.0) * 2.0 ** -53
    u2 = float(_draw(k, 2 * index + 1) >> 11) * 2.0 ** -53
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586476925 * u2)
