/* Must not compile in the run layer: backend_pytorch.h is the PyTorch backend's, above. */
#include "cli.h"
#include "backend_pytorch.h"

int cg_probe_run_up(void);
int cg_probe_run_up(void) { return cg_pytorch_api(0) != NULL; }
