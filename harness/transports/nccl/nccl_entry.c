/* nccl_entry.c — the GPU module's nccl table (nccl_api.h): the module's own
 * nccl transport, its device pre-check and its held-back sends. The only
 * exported symbol of this part of libcollgrad-gpu.so (the rest is hidden). */
#include "nccl_api.h"
#include "transport.h"

static const cg_nccl_api table = {
    .version = CG_NCCL_API_VERSION,
    .transport = cg_transport_nccl,
    .available = cg_nccl_available,
    .flush_sends = cgn_flush_sends,
};

__attribute__((visibility("default"))) const cg_nccl_api *collgrad_gpu_nccl(void);
const cg_nccl_api *collgrad_gpu_nccl(void) { return &table; }
