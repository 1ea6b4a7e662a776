/* Compiles in the interp layer: its own headers and those below. */
#include "interp.h"
#include "ops.h"

int cg_probe_interp_own(void);
int cg_probe_interp_own(void) { return (int)CG_C_COUNT + CG_MAX_DIMS; }
