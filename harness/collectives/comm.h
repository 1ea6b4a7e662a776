/* comm.h — what the interpreter asks of whoever runs its communication.
 *
 * The interpreter evaluates a program for a set of "slots", each simulating
 * one rank: all W ranks in the oracle, the process's own rank in a worker.
 * Whenever the program communicates or calls backward, it hands every active
 * slot's operand to one cg_comm at once. The oracle's cg_comm turns
 * collectives into plain differentiable ops across slots; a worker's cg_comm
 * runs a rule set over a transport. */
#ifndef CG_COMM_H
#define CG_COMM_H

#include "ir.h"
#include "tensor.h"

typedef enum {
    CG_C_ALL_REDUCE, CG_C_ALL_GATHER, CG_C_REDUCE_SCATTER, CG_C_BROADCAST, CG_C_REDUCE,
    CG_C_GATHER, CG_C_SCATTER, CG_C_ALL_TO_ALL, CG_C_SEND, CG_C_RECV, CG_C_COUNT
} cg_coll_kind;

typedef enum { CG_RED_SUM, CG_RED_AVG, CG_RED_PROD, CG_RED_MAX, CG_RED_MIN, CG_RED_COUNT } cg_redop;

const char *cg_coll_name(cg_coll_kind k);   /* "all_reduce", ... */
int cg_coll_from_name(const char *s);       /* kind, or -1 */
const char *cg_redop_name(cg_redop op);      /* "sum", "avg", "prod", "max", "min" */
int cg_redop_from_name(const char *s);      /* op, or -1 */

/* One communication call, as the program wrote it. */
typedef struct cg_coll {
    cg_coll_kind kind;
    cg_redop op;       /* all_reduce, reduce_scatter, reduce */
    int root;          /* broadcast, reduce, gather, scatter */
    int peer;          /* send: destination; recv: source */
    int seq;           /* 0-based index of this call among the program's communication calls */
    cg_srcpos pos;
} cg_coll;

/* Balanced split of n rows over w ranks: rank r owns [lo, hi) with
 * lo = r*n/w, hi = (r+1)*n/w. Used by reduce_scatter, scatter and all_to_all. */
static inline int64_t cg_chunk_lo(int64_t n, int w, int r) { return (n * r) / w; }

typedef struct cg_comm {
    void *self;
    /* in[s] is slot s's operand (NULL for slots outside the current on-block);
     * fill out[s] for every slot with an operand. Returns 0, or -1 with
     * cg_fail(g, "expected ..., got ...") — the interpreter adds file:line:col. */
    int (*collective)(void *self, cg_graph *g, const cg_coll *c, cg_tensor **in, cg_tensor **out);
    int (*send)(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *t);
    cg_tensor *(*recv)(void *self, cg_graph *g, const cg_coll *c, int slot);
    /* roots[s] is slot s's root (NULL: no backward call on that rank). */
    int (*backward)(void *self, cg_graph *g, const cg_srcpos *pos, cg_tensor **roots);
    int (*zero_grad)(void *self, cg_graph *g);
} cg_comm;

#endif
