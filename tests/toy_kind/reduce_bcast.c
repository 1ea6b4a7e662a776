/* reduce_bcast — a toy collective kind, added from outside the tree through
 * what docs/architecture.md lists for a new kind (tests/e2e/toy_kind.sh builds
 * the tool with -DCG_EXTRA_KINDS=this file): every rank gets the sum of every
 * rank's input, carried as a reduce to rank 0 and a broadcast from it (the
 * textbook all_reduce before rings). Its words, its row and its transport
 * calls are all here; the oracle, the rule sets, the transports and the
 * interpreter read them from the row.
 *
 * Backward under per-rank semantics: the sum is self-adjoint, so the
 * gradient is the same kind applied to g (dx_i = sum_r g_r). */
#include "collectives.h"

CG_KIND_WORDS(REDUCE_BCAST, "reduce_bcast", 1, 2, "group", NULL, NULL, 1, false)

/* the sum reaches rank 0, which sends it to everyone: each byte twice */
static double busbw(int world) { return world > 1 ? 2.0 : 1.0; }

/* A reduce into recv (left alone off rank 0), then a broadcast of recv in
 * place: no scratch buffer, so it runs wherever the buffers live. */
static int run(const cg_coll_via *via, const cg_coll_io *io)
{
    cg_coll_io to_root = *io;
    to_root.op = CG_RED_SUM;
    to_root.root = 0;
    if (via->call(via, CG_C_REDUCE, &to_root) != 0)
        return -1;
    cg_coll_io from_root = to_root;
    from_root.send = io->recv;
    return via->call(via, CG_C_BROADCAST, &from_root);
}

const cg_collective cg_kind_reduce_bcast = {
    CG_C_REDUCE_BCAST, .sums = true, .same_shape = true, .shape = CG_SHAPE_SAME, .transpose = CG_C_REDUCE_BCAST,
    .busbw_factor = busbw, .simulate = cg_simulate_reduce, .run = run};
