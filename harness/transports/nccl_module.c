/* nccl_module.c — the built-in "nccl" transport in a build with the GPU path:
 * its table, pre-check and held-back sends forward to the GPU module's own
 * (nccl_api.h), loaded on first use (gpu_module.h). */
#ifdef HAVE_CUDA

#include <stdio.h>

#include "gpu_module.h"
#include "nccl_api.h"
#include "transport.h"

static const cg_nccl_api *nccl(void)
{
    return cg_gpu_module_table(CG_NCCL_API_ENTRY, CG_NCCL_API_VERSION);
}

const cg_transport_ops *cg_transport_nccl(void)
{
    const cg_nccl_api *a = nccl();
    return a ? a->transport() : NULL;
}

int cg_nccl_available(cg_status *st)
{
    const cg_nccl_api *a = nccl();
    if (a)
        return a->available(st);
    return cg_error(st, "nccl: %s", cg_gpu_module_error());
}

/* Only an instance the module made holds sends: the module is loaded. */
int cgn_flush_sends(cg_transport *t)
{
    const cg_nccl_api *a = nccl();
    return a ? a->flush_sends(t) : -1;
}

#endif
