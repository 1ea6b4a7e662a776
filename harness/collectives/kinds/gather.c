/* gather — the root gets every rank's rows, concatenated in rank order.
 * Its transpose is a scatter of the root's g. */
#include "collectives.h"

CG_KIND_WORDS(GATHER, "gather", 1, 3, "root", "group", NULL, 1, false)

const cg_collective cg_kind_gather = {
    CG_C_GATHER, .root_only_output = true, .shape = CG_SHAPE_CAT,
    .transpose = CG_C_SCATTER, .busbw_factor = cg_busbw_ring, .simulate = cg_simulate_concat};
