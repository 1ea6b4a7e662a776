/* Compiles in the autograd layer: its own headers and lang's below. */
#include "autograd.h"
#include "ir.h"

int cg_probe_autograd_own(void);
int cg_probe_autograd_own(void) { return CG_MAX_DIMS + CG_MAX_WORLD; }
