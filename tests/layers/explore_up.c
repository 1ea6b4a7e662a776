/* Must not compile in explore's layer: matrix_run.h is a layer explore does not see. */
#include "explore.h"
#include "matrix_run.h"

int cg_probe_explore_up(void);
int cg_probe_explore_up(void) { return cg_matrix_main(0, NULL); }
