/* Must not compile in the oracle layer: expect.h is the reports', above. */
#include "oracle.h"
#include "expect.h"

int cg_probe_oracle_up(void);
int cg_probe_oracle_up(void) { return (int)sizeof(cg_oracle); }
