/* Compiles in the oracle layer: its own headers and those below. */
#include "hazards.h"
#include "oracle.h"
#include "rank_comm.h"

int cg_probe_oracle_own(void);
int cg_probe_oracle_own(void) { return (int)sizeof(cg_oracle) + (int)sizeof(cg_rank_comm); }
