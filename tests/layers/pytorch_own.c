/* Compiles in the PyTorch backend's layer: its own headers and those below. */
#include "backend_pytorch.h"
#include "launcher.h"

int cg_probe_pytorch_own(void);
int cg_probe_pytorch_own(void) { return cg_pytorch_api(0) != NULL; }
