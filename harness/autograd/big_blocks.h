/* big_blocks.h — where the graph arena's large blocks (tensor data of 1 MiB
 * and more) come from and go back to.
 *
 * Programs allocate tensors of the same sizes over and over: every job, every
 * backward pass, every bench iteration. Fresh memory faults its pages in on
 * first touch, which for a large all_reduce costs more than the collective;
 * heap memory kept for reuse (no mmap, no trimming) stays resident for the
 * process's life and fragments. So each large block is its own mapping, and
 * when its graph is freed it waits in this thread's cache for the next step:
 * a block of the same size is taken from there (zeroed again, no faults);
 * whatever a whole step left untaken is unmapped. Nothing freed stays
 * resident beyond one step.
 *
 * A step is the life of an outermost graph: cg_big_enter when any graph is
 * made, cg_big_leave when it is freed; only the leave that closes the last
 * open graph of the thread ends a step (a rule set's scratch graphs live
 * inside one). The cache is per thread (the threads transport runs a rank
 * per thread); a thread's cache is unmapped when the thread exits. */
#ifndef CG_BIG_BLOCKS_H
#define CG_BIG_BLOCKS_H

#include <stddef.h>

#define CG_BIG_BLOCK ((size_t)1 << 20) /* requests this large or larger */

/* A zeroed block of at least n bytes, *cap its size (hand it back with it),
 * or NULL when the system has no memory for it. */
void *cg_big_alloc(size_t n, size_t *cap);
/* The same for a block its caller overwrites whole (a transport's receive
 * buffer): fresh memory is zeros; a block taken back from the cache is not
 * cleared, which would cost a pass over memory as long as the collective's,
 * but poisoned: bytes 0xff (a NaN in every float type) over the first 64 of
 * every page and the last 64 of the n. A callee that writes nothing, or stops
 * short, then leaves NaNs, never an earlier step's values that could pass for
 * right. The first `head` bytes (the caller's header) are zeroed. */
void *cg_big_alloc_unset(size_t n, size_t head, size_t *cap);
/* Give a block back: it waits in the cache until the step after the
 * current one ends. */
void cg_big_free(void *block, size_t cap);
void cg_big_enter(void);
void cg_big_leave(void);
/* Unmap every block in this thread's cache now: for a caller about to use
 * other memory for a while (the bench, before its raw buffers), whose
 * cached blocks would otherwise stay resident beside it until the next
 * step ends. */
void cg_big_trim(void);
/* Blocks in this thread's cache, and their bytes (tests). */
size_t cg_big_cached(size_t *bytes);

#endif
