/* nccl_api.h — the GPU module's nccl table: the built-in "nccl" transport
 * (transports/nccl/), compiled into libcollgrad-gpu.so with the CUDA kernels
 * and reached through this struct once the tool has loaded the module
 * (gpu_module.h). The tool's cg_transport_nccl, cg_nccl_available and
 * cgn_flush_sends (nccl_module.c) forward through it; the module fills it
 * (nccl/nccl_entry.c). */
#ifndef CG_NCCL_API_H
#define CG_NCCL_API_H

#include <stddef.h>

#include "collgrad_transport.h"
#include "status.h"

/* Raised whenever the struct below changes (gpu_module.h checks it). */
#define CG_NCCL_API_VERSION 2 /* 2: available reports in a cg_status */
/* The module's exported function returning its table. */
#define CG_NCCL_API_ENTRY "collgrad_gpu_nccl"

typedef struct cg_nccl_api {
    int version; /* CG_NCCL_API_VERSION */
    const cg_transport_ops *(*transport)(void);
    int (*available)(cg_status *st);
    int (*flush_sends)(cg_transport *t);
} cg_nccl_api;

#endif
