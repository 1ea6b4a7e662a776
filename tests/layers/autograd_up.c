/* Must not compile in the autograd layer: comm.h is the interpreter's, above. */
#include "autograd.h"
#include "comm.h"

int cg_probe_autograd_up(void);
int cg_probe_autograd_up(void) { return (int)CG_C_COUNT; }
