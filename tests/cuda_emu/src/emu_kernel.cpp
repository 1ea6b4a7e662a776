/* emu_kernel.cpp — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md): kernel launches (CG_LAUNCH in
 * include/cuda_runtime.h lands here).
 *
 * Blocks run one after another. Inside a block every CUDA thread is a fiber
 * (ucontext) with its own stack, all on the calling host thread: fiber 0 runs
 * until it reaches __syncthreads() or returns, then fiber 1, and so on; when
 * every thread waits at the barrier they all go on to the next one. So the
 * order is deterministic, a missing __syncthreads shows up as a wrong result
 * (a thread reads shared memory its neighbours have not written yet) instead
 * of a rare race, and a barrier that only some threads reach is reported as a
 * launch failure (on a GPU: undefined behaviour, often a hang).
 * CG_CUDA_EMU_ORDER=reverse runs the blocks and the threads of each phase in
 * the opposite order, to catch code that depends on either order.
 *
 * Checked at the launch: the configuration (as CUDA: cudaErrorInvalidConfiguration
 * from cudaGetLastError) and every pointer argument, which must be NULL or
 * point into the device region (a host pointer is an illegal address on a
 * GPU). Checked after it: the canaries behind every allocation (a write past
 * the end of a buffer). Those faults are sticky, as they are on a GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <vector>

#include "cuda_runtime.h"
#include "emu_internal.h"

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace {

enum state { READY, AT_BARRIER, DONE };

struct fiber {
    ucontext_t ctx;
    char *stack;
    state st;
};

const size_t STACK_BYTES = 256 * 1024, GUARD_BYTES = 4096;

std::vector<fiber> fibers; /* grown to the largest block; stacks are reused */
ucontext_t scheduler;
int current = -1; /* the running fiber, -1 outside kernels */
cg_emu::kernel_body body;
void *body_ctx;

void entry(void)
{
    body(body_ctx);
    fibers[(size_t)current].st = DONE; /* uc_link returns to the scheduler */
}

bool make_stacks(size_t n)
{
    if (fibers.size() >= n)
        return true;
    size_t old = fibers.size();
    fibers.resize(n);
    for (size_t i = old; i < n; i++) {
        void *p = mmap(NULL, STACK_BYTES + GUARD_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            fibers.resize(i);
            return false;
        }
        mprotect(p, GUARD_BYTES, PROT_NONE); /* an overflow faults instead of corrupting */
        fibers[i].stack = (char *)p;
    }
    return true;
}

uint3 unflatten(uint64_t i, dim3 d)
{
    uint3 r = {(unsigned)(i % d.x), (unsigned)(i / d.x % d.y), (unsigned)(i / d.x / d.y)};
    return r;
}

bool reverse_order(void)
{
    const char *o = getenv("CG_CUDA_EMU_ORDER");
    return o && strcmp(o, "reverse") == 0;
}

/* Runs one block to its end; false when its threads disagree on a barrier. */
bool run_block(size_t n, bool reverse, size_t *waiting_out)
{
    for (size_t t = 0; t < n; t++) {
        fiber &f = fibers[t];
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack + GUARD_BYTES;
        f.ctx.uc_stack.ss_size = STACK_BYTES;
        f.ctx.uc_link = &scheduler;
        makecontext(&f.ctx, entry, 0);
        f.st = READY;
    }
    for (;;) {
        size_t done = 0, waiting = 0;
        for (size_t k = 0; k < n; k++) {
            size_t t = reverse ? n - 1 - k : k;
            if (fibers[t].st == READY) {
                current = (int)t;
                threadIdx = unflatten(t, blockDim);
                swapcontext(&scheduler, &fibers[t].ctx);
                current = -1;
            }
            if (fibers[t].st == DONE)
                done++;
            else
                waiting++;
        }
        if (done == n)
            return true;
        if (done) {
            *waiting_out = waiting;
            return false;
        }
        for (size_t t = 0; t < n; t++)
            fibers[t].st = READY;
    }
}

bool valid(dim3 grid, dim3 block)
{
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    return grid.x >= 1 && grid.y >= 1 && grid.z >= 1 && grid.x <= 0x7fffffffu &&
           grid.y <= 65535 && grid.z <= 65535 && threads >= 1 && threads <= 1024 &&
           block.z <= 64;
}

} /* namespace */

void __syncthreads(void)
{
    if (current < 0) {
        fprintf(stderr, "cuda-emu: __syncthreads() called outside a kernel\n");
        abort();
    }
    fiber &f = fibers[(size_t)current];
    f.st = AT_BARRIER;
    swapcontext(&f.ctx, &scheduler);
}

namespace cg_emu {

int check_pointer_arg(const char *file, int line, int index, const void *p)
{
    cg_emu_init();
    if (!p || cg_emu_in_device_region(p))
        return 0;
    cg_emu_report("kernel launched at %s:%d: argument %d (%p) is host memory, not device memory "
                  "(an illegal address on a GPU)", file, line, index + 1, p);
    cg_emu_fail(cudaErrorIllegalAddress, 1);
    return -1;
}

void run_kernel(const char *file, int line, dim3 grid, dim3 block, kernel_body b, void *ctx)
{
    cg_emu_init();
    if (cg_emu_sticky() != cudaSuccess)
        return;
    if (current >= 0) {
        fprintf(stderr, "cuda-emu: a kernel launched from inside a kernel (%s:%d)\n", file, line);
        abort();
    }
    size_t n = (size_t)block.x * block.y * block.z;
    if (!valid(grid, block)) {
        cg_emu_fail(cudaErrorInvalidConfiguration, 0);
        return;
    }
    if (!make_stacks(n)) {
        cg_emu_report("kernel launched at %s:%d: no memory for %zu thread stacks", file, line, n);
        cg_emu_fail(cudaErrorLaunchFailure, 0);
        return;
    }
    bool reverse = reverse_order();
    uint64_t blocks = (uint64_t)grid.x * grid.y * grid.z;
    gridDim = grid;
    blockDim = block;
    body = b;
    body_ctx = ctx;
    cg_emu_device_open();
    for (uint64_t k = 0; k < blocks; k++) {
        blockIdx = unflatten(reverse ? blocks - 1 - k : k, grid);
        size_t waiting = 0;
        if (!run_block(n, reverse, &waiting)) {
            cg_emu_report("kernel launched at %s:%d: in block %u, %zu of %zu threads wait in "
                          "__syncthreads() while the others have returned", file, line,
                          blockIdx.x, waiting, n);
            cg_emu_fail(cudaErrorLaunchFailure, 1);
            break;
        }
    }
    cg_emu_device_close();
    char why[200];
    if (cg_emu_check_canaries(why, sizeof why) != 0) {
        cg_emu_report("kernel launched at %s:%d: %s", file, line, why);
        cg_emu_fail(cudaErrorIllegalAddress, 1);
    }
}

} /* namespace cg_emu */
