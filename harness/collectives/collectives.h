/* collectives.h — the table of collectives: one descriptor per kind of
 * communication call, saying once what every layer above asks of it (how
 * its inputs must agree and its output is shaped, its forward across
 * simulated ranks, the collective its reference backward is, how nccl-tests
 * counts its bandwidth); its name and arguments are the language's
 * (coll_words.h). The interpreter, the oracle, the rule sets, the
 * transports and the bench read these facts here instead of deciding them
 * again, as nccl-tests keeps one struct per test.
 *
 * The descriptors are static and immutable; nothing here allocates. */
#ifndef CG_COLLECTIVES_H
#define CG_COLLECTIVES_H

#include <stdbool.h>
#include <stdint.h>

#include "coll_words.h"
#include "ir.h"
#include "tensor.h"

/* How a rank's output relates to the inputs, along the first dimension
 * (0-d inputs count as one row). */
typedef enum {
    CG_SHAPE_SAME,   /* the input's shape (all_reduce, broadcast, reduce) */
    CG_SHAPE_CAT,    /* every rank's rows, concatenated (all_gather; gather at the root) */
    CG_SHAPE_BLOCK,  /* the rank's block of the rows (reduce_scatter: its own input's;
                        scatter: the root's) */
    CG_SHAPE_BLOCKS, /* its block of every rank's rows, concatenated (all_to_all) */
    CG_SHAPE_P2P,    /* the message (send, recv) */
} cg_shape_rule;

/* One communication call, as the program wrote it. */
typedef struct cg_coll {
    cg_coll_kind kind;
    cg_redop op;       /* all_reduce, reduce_scatter, reduce */
    int root;          /* broadcast, reduce, gather, scatter */
    int peer;          /* send: destination; recv: source */
    int seq;           /* 0-based index of this call among the program's communication calls */
    cg_srcpos pos;
    /* Explicit row splits, where the call gives them (a syntax keyword
     * "send_splits"): one row of w entries per slot of the call, in in[]'s
     * order (the oracle: every rank; a worker: its own), entry r the rows of
     * that slot's input its block r holds. Borrowed for the call only: whoever
     * keeps a cg_coll copies them (the plan does) or clears the pointer.
     * NULL: the balanced split (cg_chunk_lo). */
    const int64_t *splits;
    /* The process group the call runs on (interp_group.c): its members'
     * global ranks, ascending, and its id in the program; nmembers 0 for
     * the whole world (group unused). On a group the call is that of a world
     * of nmembers ranks: root and splits count in group ranks (member k is
     * rank k). Borrowed for the call, like splits. */
    int group, nmembers;
    const int *members;
    /* The call names its split sizes (send_splits=...), on every rank that
     * makes it, member or not: all_to_all_single's form, not the list
     * form's, for a rule set whose framework has both. */
    bool sized;
} cg_coll;

/* A collective's forward across w simulated ranks as differentiable ops on
 * one graph (simulate.c; the oracle's): in[r] is rank r's input, out[r] gets
 * its output. With `replicate`, an output every rank gets alike (all_reduce,
 * all_gather, broadcast) is one tensor for all w, its replicas w (interp.h
 * cg_share), instead of a copy each. 0, or -1 with the graph's error. */
typedef int (*cg_simulate_fn)(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                              bool replicate);

/* One collective's buffers on one rank, as a transport entry takes them
 * (collgrad_transport.h): n the elements of a same-shape kind, counts the
 * per-rank counts the plan made (plan.h); op and root where the kind has
 * them (root: a rank of the call's group). */
struct cg_coll_counts;
typedef struct cg_coll_io {
    cg_redop op;
    int root;
    const void *send;
    void *recv;
    size_t n;
    const struct cg_coll_counts *counts;
    cg_dtype dt;
} cg_coll_io;

/* What a kind's `run` issues its transport calls through (the transport
 * layer hands it one: transport.h cg_tp_collective): call() runs one call of
 * a kind whose row has no run of its own, on the same handle and for the
 * same program call, and returns 0 or -1 with the handle's error. */
typedef struct cg_coll_via {
    void *self;
    int rank, world;
    int (*call)(const struct cg_coll_via *via, cg_coll_kind k, const cg_coll_io *io);
} cg_coll_via;

/* A kind carried out as other kinds' transport calls (its file composes
 * them); 0, or -1 as the failing call left it. */
typedef int (*cg_coll_run_fn)(const cg_coll_via *via, const cg_coll_io *io);

typedef struct cg_collective {
    cg_coll_kind kind;       /* its name and syntax: coll_words.h */
    bool p2p;                /* send and recv: a matched pair, not every rank */
    bool same_shape;         /* every rank's input must have the same shape */
    bool root_only_output;   /* only the root's output is meaningful (reduce, gather) */
    bool in_place;           /* the transport entry works on one buffer (broadcast) */
    bool benched;            /* `collgrad-check bench -c` times it (nccl-tests' five) */
    /* It adds the members' inputs though it takes no op= (a composed sum,
     * like the toy kind of tests/toy_kind): explore bounds its values as a
     * SUM's. A kind that takes op= says so in its words instead. */
    bool sums;
    cg_shape_rule shape;
    cg_coll_kind transpose;  /* the collective its reference backward moves g with */
    /* nccl-tests' bus bandwidth factor at `world` ranks (doc/PERFORMANCE.md) */
    double (*busbw_factor)(int world);
    cg_simulate_fn simulate; /* NULL for send and recv (the oracle pairs them itself) */
    /* NULL: the transport's own entry of this name carries it (every
     * built-in kind); else the kind's calls on other kinds' entries. */
    cg_coll_run_fn run;
} cg_collective;

/* A kind's file (kinds/NAME.c) begins with its words, one line the build
 * reads into the language's table (kinds/kinds.cmake, coll_words.h):
 *     CG_KIND_WORDS(KIND, "name", min args, max args, kw1, kw2, kw3, index of kw1, statement)
 * and defines its row, `const cg_collective cg_kind_NAME`. In C the words
 * line says nothing more. */
#define CG_KIND_WORDS(...)

/* nccl-tests' bus bandwidth factors (doc/PERFORMANCE.md) the rows share */
double cg_busbw_one(int world);  /* broadcast, reduce, send, recv: 1 */
double cg_busbw_ring(int world); /* gathers, scatters, all_to_all: (W-1)/W */

/* The descriptor of kind k; NULL when k is not a kind. */
const cg_collective *cg_collective_of(cg_coll_kind k);
/* The descriptor named `name` ("all_gather"); NULL when there is none. */
const cg_collective *cg_collective_named(const char *name);

/* Whether kind k takes a reduction op (op=) or a root (root=, a global
 * rank): the language's syntax says (coll_words.h). */
bool cg_coll_has_op(cg_coll_kind k);
bool cg_coll_has_root(cg_coll_kind k);

/* Balanced split of n rows over w ranks: rank r owns [lo, hi) with
 * lo = r*n/w, hi = (r+1)*n/w. Used by reduce_scatter, scatter and all_to_all. */
static inline int64_t cg_chunk_lo(int64_t n, int w, int r) { return (n * r) / w; }

/* Row j of a splits array (cg_coll.splits, cg_plan_event.splits): w
 * entries, or NULL for the balanced split when there is none. */
static inline const int64_t *cg_split_row(const int64_t *splits, int w, int j)
{
    return splits ? splits + (size_t)j * (size_t)w : NULL;
}

/* First row of block r of n rows split over w ranks by `split` (w entries,
 * summing to n), or balanced (cg_chunk_lo) when split is NULL. */
static inline int64_t cg_split_lo(const int64_t *split, int64_t n, int w, int r)
{
    if (!split)
        return cg_chunk_lo(n, w, r);
    int64_t lo = 0;
    for (int k = 0; k < r; k++)
        lo += split[k];
    return lo;
}

static inline int64_t cg_split_rows(const int64_t *split, int64_t n, int w, int r)
{
    return cg_split_lo(split, n, w, r + 1) - cg_split_lo(split, n, w, r);
}

/* The simulations the table's rows point to (simulate.c). */
int cg_simulate_reduce(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                       bool replicate);
int cg_simulate_concat(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                       bool replicate);
int cg_simulate_broadcast(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                          bool replicate);
int cg_simulate_reduce_scatter(cg_graph *g, const cg_coll *c, int w, cg_tensor **in,
                               cg_tensor **out, bool replicate);
int cg_simulate_scatter(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                        bool replicate);
int cg_simulate_all_to_all(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                           bool replicate);
/* Block r of x's rows split over w ranks by `split` (NULL: balanced), as a
 * differentiable slice. */
cg_tensor *cg_coll_block(cg_graph *g, cg_tensor *x, const int64_t *split, int w, int r);

#endif
