/* Must not compile in the interp layer: transport.h is the transports', above. */
#include "interp.h"
#include "transport.h"

int cg_probe_interp_up(void);
int cg_probe_interp_up(void) { return CG_TRANSPORT_ABI_VERSION; }
