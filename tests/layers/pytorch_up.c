/* Must not compile in the PyTorch backend's layer: explore.h is explore's, above. */
#include "backend_pytorch.h"
#include "explore.h"

int cg_probe_pytorch_up(void);
int cg_probe_pytorch_up(void) { return cg_explore_main(0, NULL); }
