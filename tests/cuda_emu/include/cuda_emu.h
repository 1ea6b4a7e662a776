/* cuda_emu.h — cuda-emu's own functions (not CUDA API): what the emulated
 * runtime, cuBLAS and NCCL share, and what the emulation's tests call. This is
 * the in-tree EMULATION of CUDA for CI (tests/cuda_emu/README.md). Plain C. */
#ifndef CG_CUDA_EMU_H
#define CG_CUDA_EMU_H

#include <stddef.h>

#include "cuda_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when [p, p + bytes) lies inside one live allocation of the emulated
 * device (bytes == 0: p is inside one, or at its end). */
int cg_emu_device_range(const void *p, size_t bytes);
/* 1 when p lies anywhere in the device region (allocated or not). */
int cg_emu_in_device_region(const void *p);

/* Device memory is readable and writable only between open and close
 * (calls nest). Emulated kernels, copies, cuBLAS and NCCL bracket their work
 * with these; host code outside them that touches device memory crashes. */
void cg_emu_device_open(void);
void cg_emu_device_close(void);

/* "cuda-emu: <message>" on stderr; kept for cg_emu_last_message. */
void cg_emu_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *cg_emu_last_message(void);

/* A failure the emulation detected: the error becomes the last error; sticky
 * ones (a fault inside a kernel) are returned by every later call, as a real
 * context's are. */
cudaError_t cg_emu_fail(cudaError_t e, int sticky);
/* The sticky error, or cudaSuccess. */
cudaError_t cg_emu_sticky(void);

/* 1 when s is the default stream (0) or a stream not yet destroyed. */
int cg_emu_stream_ok(cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
