/* Must not compile in the matrix's layer: explore.h is a layer the matrix does not see. */
#include "matrix_run.h"
#include "explore.h"

int cg_probe_matrix_up(void);
int cg_probe_matrix_up(void) { return cg_explore_main(0, NULL); }
