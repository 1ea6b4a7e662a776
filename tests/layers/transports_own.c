/* Compiles in the transports layer: its own headers and those below. */
#include "board.h"
#include "transport.h"
#include "transport_fault.h"

int cg_probe_transports_own(void);
int cg_probe_transports_own(void) { return CG_TRANSPORT_ABI_VERSION + CG_MAX_DIMS; }
