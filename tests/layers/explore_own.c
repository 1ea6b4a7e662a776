/* Compiles in explore's layer: its own headers and those below. */
#include "explore.h"
#include "explore_class.h"
#include "backend_pytorch.h"

int cg_probe_explore_own(void);
int cg_probe_explore_own(void) { return cg_pytorch_api(0) != NULL; }
