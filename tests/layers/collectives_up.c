/* Must not compile in the collectives layer: transport.h is the transports', above. */
#include "comm.h"
#include "transport.h"

int cg_probe_collectives_up(void);
int cg_probe_collectives_up(void) { return CG_TRANSPORT_ABI_VERSION; }
