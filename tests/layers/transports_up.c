/* Must not compile in the transports layer: rules.h is the rule sets', above. */
#include "transport.h"
#include "rules.h"

int cg_probe_transports_up(void);
int cg_probe_transports_up(void) { return CG_RULES_ABI_VERSION; }
