/* cuda_entry.c — the GPU module's CUDA table (cuda_api.h): the module's own
 * cg_cuda_* functions. Compiled into libcollgrad-gpu.so, whose every other
 * symbol is hidden, so this entry is the only way in and the tool's
 * forwarders of the same names never stand in for the module's own. */
#include "cuda_api.h"

#define CG_CUDA_API_ROW(name, params, args) .name = name,
static const cg_cuda_api table = {
    .version = CG_CUDA_API_VERSION,
    .cg_cuda_last_error = cg_cuda_last_error,
    .cg_cuda_shutdown = cg_cuda_shutdown,
    .cg_cuda_arena_new = cg_cuda_arena_new,
    .cg_cuda_alloc = cg_cuda_alloc,
    .cg_cuda_free_all = cg_cuda_free_all,
    .cg_cuda_arena_free = cg_cuda_arena_free,
    CG_CUDA_INT_API(CG_CUDA_API_ROW)
};

__attribute__((visibility("default"))) const cg_cuda_api *collgrad_gpu_cuda(void);
const cg_cuda_api *collgrad_gpu_cuda(void) { return &table; }
