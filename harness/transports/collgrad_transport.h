/* collgrad_transport.h — the transport ABI of collgrad-check (installed for
 * plugins). A transport moves bytes: a table of plain collectives over
 * contiguous buffers. Rule sets (the backward formulas) are written against
 * this table only, so any rule set runs over any transport.
 *
 * A plugin is a shared object exporting one symbol:
 *     const cg_transport_ops *collgrad_transport(void);
 * and may call collgrad_builtin_transport (below) to wrap a built-in one.
 * The tool checks ops->abi_version == CG_TRANSPORT_ABI_VERSION before use.
 *
 * Conventions for every call:
 *  - counts are numbers of elements of `dtype`, not bytes;
 *  - send == recv is allowed where noted (in place);
 *  - returns 0, or -1 after recording a message readable with last_error();
 *  - calls are collective over all ranks unless noted (send/recv are not),
 *    and must be issued in the same order on every rank. */
#ifndef COLLGRAD_TRANSPORT_H
#define COLLGRAD_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#define CG_TRANSPORT_ABI_VERSION 3 /* 2: split (process groups); 3: one entry, call, for every call */

typedef enum { CGT_F32 = 0, CGT_F64 = 1, CGT_BF16 = 2, CGT_F16 = 3 } cgt_dtype;
typedef enum { CGT_SUM = 0, CGT_AVG = 1, CGT_PROD = 2, CGT_MAX = 3, CGT_MIN = 4 } cgt_redop;

/* capability flags */
#define CGT_CAP_HOST 0x1u   /* buffers in host memory */
#define CGT_CAP_CUDA 0x2u   /* buffers in CUDA device memory */
#define CGT_CAP_HALF 0x4u   /* bf16 and f16 */

/* The calls a transport carries, and what each computes on rank r of W
 * (the fields of cgt_call it reads in brackets):
 *   ALL_REDUCE      recv[i] = op_k send_k[i]; in place when send == recv    [send recv count op]
 *   ALL_GATHER      recv = cat_k send_k, send_k has counts[k] elements      [send recv counts]
 *   REDUCE_SCATTER  recv = (op_k send_k)[offset of r : + counts[r]];
 *                   send has sum(counts)                                    [send recv counts op]
 *   BROADCAST       recv = recv_root, in place                              [recv count root]
 *   REDUCE          recv (significant at the root only) = op_k send_k       [send recv count op root]
 *   GATHER          recv at the root = cat_k send_k (counts[k] each);
 *                   recv ignored elsewhere                                  [send recv counts root]
 *   SCATTER         recv = send_root[offset r : + counts[r]]; send
 *                   significant at the root only                            [send recv counts root]
 *   ALL_TO_ALL      recv = cat_j (send_j's block for me); counts[j]
 *                   elements go to rank j, recvcounts[j] come from rank j   [send recv counts recvcounts]
 *   SEND, RECV      point to point, matched by (peer, tag); tag < 32768;
 *                   not collective                                          [send or recv, count peer tag]
 *   BARRIER         every rank has reached it                               []
 * A transport that does not carry a call fails it with a message. */
typedef enum {
    CGT_ALL_REDUCE, CGT_ALL_GATHER, CGT_REDUCE_SCATTER, CGT_BROADCAST, CGT_REDUCE, CGT_GATHER,
    CGT_SCATTER, CGT_ALL_TO_ALL, CGT_SEND, CGT_RECV, CGT_BARRIER, CGT_NCALLS
} cgt_kind;

typedef struct cgt_call {
    cgt_kind kind;
    const void *send;
    void *recv;
    size_t count;              /* the elements of a call of one count */
    const size_t *counts;      /* per-rank counts: world entries, the same on every rank
                                  (a transport may choose its call from them) */
    const size_t *recvcounts;  /* ALL_TO_ALL */
    cgt_dtype dtype;
    cgt_redop op;
    int root;
    int peer, tag;
} cgt_call;

typedef struct cg_transport cg_transport; /* an initialized instance (opaque) */

typedef struct cg_transport_ops {
    int abi_version;                      /* CG_TRANSPORT_ABI_VERSION */
    const char *name;                     /* "mpi", "nccl", ... */
    const char *version;                  /* the library's version, for reports */
    unsigned caps;                        /* CGT_CAP_* */

    /* Create an instance over the ranks of the current MPI world (MPI is
     * initialized by the tool before). NULL with *err (static text) on failure. */
    cg_transport *(*create)(const char **err);
    void (*destroy)(cg_transport *t);
    int (*rank)(const cg_transport *t);
    int (*world)(const cg_transport *t);
    const char *(*last_error)(const cg_transport *t);

    /* ABI 3. Every call, as cgt_call says (one entry: a transport adds a
     * kind of call in one place, a wrapper intercepts the calls it wants). */
    int (*call)(cg_transport *t, const cgt_call *c);

    /* ABI 2. A process group: a new instance over the ranks of t that pass
     * the same color (MPI_Comm_split's contract): collective over t, every
     * rank calls it in the same order; key orders the new ranks; color < 0
     * is no member (NULL with *err NULL). NULL with *err on failure. May be
     * NULL itself: the transport has no groups, and a case that makes one
     * fails with that said. The tool destroys the instance with destroy. */
    cg_transport *(*split)(cg_transport *t, int color, int key, const char **err);
} cg_transport_ops;

/* Provided by the collgrad-check executable to the plugins it loads: the
 * table of a built-in transport by name ("mpi"; "nccl" in a build with the
 * GPU path), or NULL for any other name. A plugin may wrap one and change a
 * single entry (examples/buggy_transport does); the instance it creates with
 * that table's create() is its own to destroy. */
const cg_transport_ops *collgrad_builtin_transport(const char *name);

/* The one symbol a transport plugin exports. */
typedef const cg_transport_ops *(*cg_transport_entry_fn)(void);
#define CG_TRANSPORT_ENTRY "collgrad_transport"

#endif
