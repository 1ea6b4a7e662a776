/* Compiles in the lang layer: its own headers only (tests/e2e/layers.sh). */
#include "dtype.h"
#include "ir.h"

size_t cg_probe_lang_own(void);
size_t cg_probe_lang_own(void) { return sizeof(cg_case) + cg_dtype_size(CG_F64); }
