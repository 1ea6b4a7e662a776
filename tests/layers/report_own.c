/* Compiles in the report layer: its own headers and those below. */
#include "diagnose.h"
#include "expect.h"
#include "report_json.h"

int cg_probe_report_own(void);
int cg_probe_report_own(void) { return CG_EXIT_INFRA + (int)sizeof(cg_oracle); }
