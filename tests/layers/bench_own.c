/* Compiles in bench's layer: its own headers and those below. */
#include "bench.h"
#include "launcher.h"

int cg_probe_bench_own(void);
int cg_probe_bench_own(void) { return (int)sizeof(cg_bench_opts) + (int)sizeof(cg_options); }
