/* Compiles in the rules layer: its own headers and those below. */
#include "rules.h"
#include "plugin.h"

int cg_probe_rules_own(void);
int cg_probe_rules_own(void) { return CG_RULES_ABI_VERSION + CG_TRANSPORT_ABI_VERSION; }
