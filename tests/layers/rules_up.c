/* Must not compile in the rules layer: oracle.h is the oracle's, above. */
#include "rules.h"
#include "oracle.h"

int cg_probe_rules_up(void);
int cg_probe_rules_up(void) { return (int)sizeof(cg_oracle); }
