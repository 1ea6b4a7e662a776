/* Compiles in the matrix's layer: its own headers and those below. */
#include "matrix_run.h"
#include "backend_pytorch.h"

int cg_probe_matrix_own(void);
int cg_probe_matrix_own(void) { return cg_pytorch_api(0) != NULL; }
