/* cuda_module.c — the CUDA API of cuda/cuda_ops.h in a build with the GPU
 * path: each cg_cuda_* forwards to the GPU module's own (cuda_api.h), which
 * is loaded on the first call that needs the device (gpu_module.h). Calls
 * that only release or report (shutdown, free_all, arena_free, last_error)
 * never load it: a CPU-only run keeps no CUDA library mapped.
 *
 * Until the module loads, every int function returns -1 and
 * cg_cuda_last_error() says why it could not (cuda_absent.c is the build
 * without CUDA). */
#ifdef HAVE_CUDA

#include "cuda_api.h"
#include "gpu_module.h"

/* The module's table, loading the module on first use; NULL when it cannot. */
static const cg_cuda_api *cuda(void)
{
    return cg_gpu_module_table(CG_CUDA_API_ENTRY, CG_CUDA_API_VERSION);
}

/* The table only when the module is already loaded. */
static const cg_cuda_api *cuda_if_loaded(void) { return cg_gpu_module_loaded() ? cuda() : NULL; }

const char *cg_cuda_last_error(void)
{
    const cg_cuda_api *a = cuda_if_loaded();
    return a ? a->cg_cuda_last_error() : cg_gpu_module_error();
}

void cg_cuda_shutdown(void)
{
    const cg_cuda_api *a = cuda_if_loaded();
    if (a)
        a->cg_cuda_shutdown();
}

cg_cuda_arena *cg_cuda_arena_new(void)
{
    const cg_cuda_api *a = cuda();
    return a ? a->cg_cuda_arena_new() : NULL;
}

void *cg_cuda_alloc(cg_cuda_arena *arena, size_t bytes)
{
    const cg_cuda_api *a = cuda();
    return a ? a->cg_cuda_alloc(arena, bytes) : NULL;
}

/* An arena exists only once the module made it: nothing to free before. */
void cg_cuda_free_all(cg_cuda_arena *arena)
{
    const cg_cuda_api *a = cuda_if_loaded();
    if (a)
        a->cg_cuda_free_all(arena);
}

void cg_cuda_arena_free(cg_cuda_arena *arena)
{
    const cg_cuda_api *a = cuda_if_loaded();
    if (a)
        a->cg_cuda_arena_free(arena);
}

/* `int name(params) { ... api_->name(args) }` with the exact prototype, so the
 * compiler checks every row of cuda_api.h against cuda_ops.h. */
#define CG_CUDA_FORWARD(name, params, args)                                                      \
    int name params                                                                              \
    {                                                                                            \
        const cg_cuda_api *api_ = cuda(); /* parameters may be called a */                       \
        return api_ ? api_->name args : -1;                                                      \
    }
CG_CUDA_INT_API(CG_CUDA_FORWARD)

#endif
