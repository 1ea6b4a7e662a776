/* emu_internal.h — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md): what its source files share. C++ only. */
#ifndef CG_CUDA_EMU_INTERNAL_H
#define CG_CUDA_EMU_INTERNAL_H

#include <stddef.h>

#include "cuda_runtime_api.h"

/* emu_memory.cpp: the device region. */
void *cg_emu_alloc(size_t size);  /* NULL when the region is full */
int cg_emu_free(void *p);         /* 0; 1: freed, but its canary was broken; -1: not a block */
int cg_emu_check_canaries(char *msg, size_t len); /* 0, or -1 with the first overrun */
void cg_emu_memory_info(size_t *free_bytes, size_t *total_bytes);

/* emu_runtime.cpp: the first call of any API says, once, that this is an
 * emulation (unless CG_CUDA_EMU_QUIET=1). */
void cg_emu_init(void);

/* Device memory accessible for the life of this object. */
struct cg_emu_window {
    cg_emu_window() { cg_emu_device_open(); }
    ~cg_emu_window() { cg_emu_device_close(); }
    cg_emu_window(const cg_emu_window &) = delete;
    cg_emu_window &operator=(const cg_emu_window &) = delete;
};

#endif
