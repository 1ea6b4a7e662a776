/* emu_memory.cpp — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md): the emulated device's memory.
 *
 * One dedicated region, reserved with mmap at the first use, holds every
 * cudaMalloc. The region is PROT_NONE except between cg_emu_device_open and
 * cg_emu_device_close, which only the emulated kernels, copies, memsets,
 * cuBLAS and NCCL call. So host code that reads or writes a device pointer
 * (a missing download, a device pointer handed to a CPU loop) dies with
 * SIGSEGV, as it would beside a real GPU; a handler says so on stderr and
 * then lets the signal take its normal course.
 *
 * Allocations are 256-byte aligned, first fit with coalescing. Each is
 * followed by at least 64 canary bytes, checked after every kernel and at
 * cudaFree, so a kernel writing past the end of a buffer is a launch failure
 * here rather than a silent corruption. New allocations are filled with 0xff
 * (NaN in every float type), so code that assumes cudaMalloc zeroes shows up.
 * The device is driven from one host thread (as the tool does). */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>

#include "emu_internal.h"

namespace {

const size_t ALIGN = 256, CANARY = 64, PAGE_FALLBACK = 4096;
const unsigned char CANARY_BYTE = 0xcb, FRESH_BYTE = 0xff;

char *base;              /* the region */
size_t reserved;         /* its size */
size_t top;              /* end of the highest block in use */
size_t mapped;           /* page-rounded high-water mark: what open makes accessible */
int depth;               /* open calls not yet closed */
size_t in_use;           /* bytes of live blocks */
std::map<size_t, size_t> live;  /* offset -> requested size */
std::map<size_t, size_t> holes; /* offset -> length, free blocks below top */
struct sigaction old_segv, old_bus;
char last_message[512];

size_t block_len(size_t size) { return (size + CANARY + ALIGN - 1) / ALIGN * ALIGN; }

size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : PAGE_FALLBACK;
}

void protect(size_t from, size_t to, int prot)
{
    if (to > from && mprotect(base + from, to - from, prot) != 0) {
        perror("cuda-emu: mprotect of the device region");
        abort();
    }
}

/* Writes s to stderr from a signal handler. */
void say(const char *s) { ssize_t w = write(2, s, strlen(s)); (void)w; }

void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char *a = (char *)si->si_addr;
    if (base && a >= base && a < base + reserved) {
        char hex[20] = "0x", *p = hex + 2;
        uintptr_t v = (uintptr_t)a;
        for (int shift = (int)(sizeof v * 8) - 4; shift >= 0; shift -= 4)
            *p++ = "0123456789abcdef"[(v >> shift) & 15];
        *p = 0;
        say("cuda-emu: host code touched device memory at ");
        say(hex);
        say(depth ? " (outside every allocation)\n"
                  : ": a device pointer used on the host (a missing cudaMemcpy?)\n");
    }
    /* The previous disposition takes the repeated fault: a chained handler,
     * or the default (the process dies of this signal). */
    sigaction(sig, sig == SIGSEGV ? &old_segv : &old_bus, NULL);
}

void reserve(void)
{
    const char *mb = getenv("CG_CUDA_EMU_MEMORY_MB");
    reserved = (size_t)(mb && atol(mb) > 0 ? atol(mb) : 4096) << 20;
    void *p = mmap(NULL, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("cuda-emu: mmap of the device region");
        abort();
    }
    base = (char *)p;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
}

/* The live block holding p, or live.end(). */
std::map<size_t, size_t>::iterator block_of(const void *p)
{
    if (!base || (const char *)p < base || (const char *)p >= base + reserved)
        return live.end();
    size_t off = (size_t)((const char *)p - base);
    auto it = live.upper_bound(off);
    if (it == live.begin())
        return live.end();
    --it;
    return off < it->first + it->second ? it : live.end();
}

/* The first canary byte of a block that is not intact, or NULL. */
const unsigned char *broken_canary(size_t off, size_t size)
{
    const unsigned char *c = (const unsigned char *)base + off + size;
    for (size_t i = 0; i < block_len(size) - size; i++)
        if (c[i] != CANARY_BYTE)
            return c + i;
    return NULL;
}

void add_hole(size_t off, size_t len)
{
    auto next = holes.lower_bound(off);
    if (next != holes.end() && off + len == next->first) { /* merge with the one after */
        len += next->second;
        next = holes.erase(next);
    }
    if (next != holes.begin()) { /* and with the one before */
        auto prev = std::prev(next);
        if (prev->first + prev->second == off) {
            off = prev->first;
            len += prev->second;
            holes.erase(prev);
        }
    }
    if (off + len == top)
        top = off;
    else
        holes[off] = len;
}

} /* namespace */

extern "C" {

void cg_emu_device_open(void)
{
    if (depth++ == 0)
        protect(0, mapped, PROT_READ | PROT_WRITE);
}

void cg_emu_device_close(void)
{
    if (--depth == 0)
        protect(0, mapped, PROT_NONE);
}

int cg_emu_in_device_region(const void *p)
{
    return base && (const char *)p >= base && (const char *)p < base + reserved;
}

int cg_emu_device_range(const void *p, size_t bytes)
{
    const char *c = (const char *)p;
    auto it = block_of(c);
    if (it == live.end() && bytes == 0 && c) /* an empty range may sit at a block's end */
        it = block_of(c - 1);
    return it != live.end() && (size_t)(c - base) + bytes <= it->first + it->second;
}

void cg_emu_report(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda-emu: %s\n", last_message);
}

const char *cg_emu_last_message(void) { return last_message; }

} /* extern "C" */

void *cg_emu_alloc(size_t size)
{
    if (!base)
        reserve();
    size_t len = block_len(size), off = top;
    auto h = holes.begin();
    while (h != holes.end() && h->second < len)
        ++h;
    if (h != holes.end()) {
        off = h->first;
        if (h->second > len)
            holes[off + len] = h->second - len;
        holes.erase(h);
    } else if (top + len > reserved) {
        return NULL;
    } else {
        top += len;
    }
    if (top > mapped) { /* the accessible part grows; open now if inside a window */
        size_t page = page_size(), grown = (top + page - 1) / page * page;
        if (depth)
            protect(mapped, grown, PROT_READ | PROT_WRITE);
        mapped = grown;
    }
    live[off] = size;
    in_use += len;
    cg_emu_device_open();
    memset(base + off, FRESH_BYTE, size);
    memset(base + off + size, CANARY_BYTE, len - size);
    cg_emu_device_close();
    return base + off;
}

int cg_emu_free(void *p)
{
    auto it = block_of(p);
    if (it == live.end() || base + it->first != (char *)p)
        return -1;
    size_t off = it->first, size = it->second, len = block_len(size);
    cg_emu_device_open();
    const unsigned char *bad = broken_canary(off, size);
    if (bad)
        cg_emu_report("cudaFree(%p): something wrote %zu bytes past the end of this %zu-byte "
                      "allocation", p, (size_t)(bad - (const unsigned char *)p) - size + 1, size);
    memset(base + off, FRESH_BYTE, len); /* a use after free reads NaN */
    cg_emu_device_close();
    live.erase(it);
    in_use -= len;
    add_hole(off, len);
    return bad ? 1 : 0;
}

int cg_emu_check_canaries(char *msg, size_t len)
{
    cg_emu_device_open();
    int rc = 0;
    for (auto &b : live) {
        const unsigned char *bad = broken_canary(b.first, b.second);
        if (bad) {
            snprintf(msg, len, "a write %zu bytes past the end of the %zu-byte allocation at %p",
                     (size_t)(bad - (const unsigned char *)base) - b.first - b.second + 1,
                     b.second, (void *)(base + b.first));
            rc = -1;
            break;
        }
    }
    cg_emu_device_close();
    return rc;
}

void cg_emu_memory_info(size_t *free_bytes, size_t *total_bytes)
{
    if (!base)
        reserve();
    *total_bytes = reserved;
    *free_bytes = reserved - in_use;
}
