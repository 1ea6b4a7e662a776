/* Must not compile in bench's layer: backend_pytorch.h is a layer bench does not see. */
#include "bench.h"
#include "backend_pytorch.h"

int cg_probe_bench_up(void);
int cg_probe_bench_up(void) { return cg_pytorch_api(0) != NULL; }
