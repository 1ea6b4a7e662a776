/* gpu_module.h — the GPU part of the tool as a module: libcollgrad-gpu.so
 * holds the CUDA kernels (harness/cuda) and the nccl transport, and alone
 * links cudart, cuBLAS and NCCL. The tool loads it with dlopen on first use
 * (a graph moving to the device, --device cuda, --transport nccl), so a
 * CPU-only run maps no CUDA or NCCL library and costs what a build without
 * CUDA costs.
 *
 * Where it is looked for, first found wins: $COLLGRAD_GPU_MODULE (a path;
 * when set, the only place), beside the executable, the install's
 * LIBDIR/collgrad-check/ relative to the executable, and the build tree
 * (for the test programs). The module exports one function per table
 * (cuda_api.h, nccl_api.h), each table starting with its int version.
 *
 * Process-wide and loaded at most once; the module stays loaded until exit.
 * Not thread-safe: one thread drives the device (cuda_ops.h). */
#ifndef CG_GPU_MODULE_H
#define CG_GPU_MODULE_H

#include <stdbool.h>

#define CG_GPU_MODULE_FILE "libcollgrad-gpu.so"

/* Loads the module if it is not yet and returns the table its function
 * `entry` returns, after checking the table's version; NULL when the module
 * cannot be found or loaded, lacks `entry` or has another version:
 * cg_gpu_module_error() then says which, naming the path. */
const void *cg_gpu_module_table(const char *entry, int version);
/* Why the last cg_gpu_module_table failed ("" before any failure). */
const char *cg_gpu_module_error(void);
/* Whether the module is loaded (no attempt to load it). */
bool cg_gpu_module_loaded(void);

#endif
