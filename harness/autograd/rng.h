/* rng.h — counter-based random numbers for case inputs.
 *
 * A value depends only on (case seed, rank, tensor name, element index): no
 * state, no order of calls. The oracle (simulating every rank in one process),
 * each worker process, and a GPU kernel all draw the same inputs. Uniforms are
 * multiples of 2^-p with p the case dtype's significand width, so they are
 * exact in that dtype and the oracle's f64 copy equals the worker's input. */
#ifndef CG_RNG_H
#define CG_RNG_H

#include <stdint.h>

#include "tensor.h"

uint64_t cg_rng_key(uint64_t seed, int rank, const char *name);
/* uniform in [0, 1), exact in dtype dt */
double cg_rng_uniform(uint64_t key, int64_t index, cg_dtype dt);
/* standard normal (Box-Muller on two counters), rounded to dt */
double cg_rng_normal(uint64_t key, int64_t index, cg_dtype dt);
/* FNV-1a 64-bit, the default case seed (hash of the case name) */
uint64_t cg_fnv1a64(const char *s);

#endif
