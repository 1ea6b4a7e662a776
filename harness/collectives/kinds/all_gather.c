/* all_gather — every rank gets every rank's rows, concatenated in rank order
 * (ragged: each rank's own count). Its transpose is a reduce_scatter of g. */
#include "collectives.h"

CG_KIND_WORDS(ALL_GATHER, "all_gather", 1, 2, "group", NULL, NULL, 1, false)

const cg_collective cg_kind_all_gather = {
    CG_C_ALL_GATHER, .benched = true, .shape = CG_SHAPE_CAT,
    .transpose = CG_C_REDUCE_SCATTER, .busbw_factor = cg_busbw_ring, .simulate = cg_simulate_concat};
