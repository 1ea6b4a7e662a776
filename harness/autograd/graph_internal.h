/* graph_internal.h — the graph's state, shared by graph.c (the arena, the
 * error slot, autograd's bookkeeping) and tensor.c (making tensors). Not a
 * public interface: autograd.h and tensor.h are. */
#ifndef CG_GRAPH_INTERNAL_H
#define CG_GRAPH_INTERNAL_H

#include <stddef.h>

#include "autograd.h"
#include "cuda_ops.h"

#define ARENA_CHUNK_BYTES ((size_t)64 * 1024)
#define NONDIFF_LEN 128

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    size_t mapped;     /* a big block's size (big_blocks.h), else 0: calloc'd */
    max_align_t mem[]; /* cap bytes, aligned for any object */
} arena_chunk;

struct cg_graph {
    arena_chunk *chunks;  /* head has the free space; the rest are full or dedicated */
    cg_tensor **tensors;  /* every tensor made in the graph (malloc'd array) */
    int64_t ntensors, cap_tensors;
    int64_t next_id;
    cg_node *tape;        /* newest node first */
    int64_t nalways;      /* always_run nodes on the tape (cg_node_always_run) */
    /* The tensors given a pgrad in the current pass (cg_graph_touch), so the
     * pass folds and drops those, not every tensor of the graph; `pending`
     * counts the ones a node made whose node has not run yet, so the walk
     * stops once nothing older can receive a gradient (autograd.c). */
    cg_tensor **touched;
    int64_t ntouched, cap_touched, pending;
    int64_t walked;       /* tape nodes the passes have visited, in all (a cost the tests bound) */
    cg_status st;              /* the last error: CG_EXIT_USAGE, or CG_EXIT_INFRA (memory, a stop: cancel.h) */
    char nondiff[NONDIFF_LEN]; /* first non-differentiable point met; "" = none */
    cg_cuda_arena *device;     /* non-NULL: tensor data lives here (cg_graph_use_cuda) */
    int64_t max_tensor, max_total; /* element budget (cg_graph_set_limits); 0 = none */
    int ranks;                 /* the ranks max_total is for (the message names one rank's share) */
    int64_t total;             /* elements of every tensor made so far */
    cg_deadline deadline;      /* the run's limit (cg_graph_set_deadline); at 0 = none */
};

/* n bytes from the arena, zeroed when zero; NULL (the graph's error set) when
 * out of memory. */
void *cg_graph_arena_alloc(cg_graph *g, size_t n, bool zero);
/* t into the graph's list of tensors: 0, or -1 (the graph's error set). */
int cg_graph_remember(cg_graph *g, cg_tensor *t);

#endif
