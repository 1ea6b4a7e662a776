/* dtype.h — element types: the case language names them (`dtype f32`), and
 * every layer above stores and rounds values by them. The bottom of the
 * layer stack (lang), so the IR needs no tensor to say what type a case
 * computes in.
 *
 * The half formats are converted here too, round to nearest even: rounding
 * an input to its case's dtype (cg_round_to) is how the oracle, which
 * computes in f64, sees the same inputs as the ranks. */
#ifndef CG_DTYPE_H
#define CG_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { CG_F32 = 0, CG_F64 = 1, CG_BF16 = 2, CG_F16 = 3 } cg_dtype;

const char *cg_dtype_name(cg_dtype dt);
int cg_dtype_parse(const char *s, cg_dtype *out); /* 0 ok, -1 unknown */
size_t cg_dtype_size(cg_dtype dt);
double cg_round_to(cg_dtype dt, double v); /* v rounded to dt, as double */
double cg_dtype_eps(cg_dtype dt);          /* machine epsilon of dt */

/* ---- half-precision conversions (round to nearest even) ------------------ */
uint16_t cg_f32_to_bf16(float f);
float cg_bf16_to_f32(uint16_t h);
uint16_t cg_f32_to_f16(float f);
float cg_f16_to_f32(uint16_t h);

#endif
