/* reduce_scatter — rank r gets block r of op over every rank's input (balanced
 * rows, or the call's send_splits). Its transpose is an all_gather of g. */
#include "collectives.h"

CG_KIND_WORDS(REDUCE_SCATTER, "reduce_scatter", 1, 4, "op", "send_splits", "group", 1, false)

const cg_collective cg_kind_reduce_scatter = {
    CG_C_REDUCE_SCATTER, .benched = true, .same_shape = true, .shape = CG_SHAPE_BLOCK,
    .transpose = CG_C_ALL_GATHER, .busbw_factor = cg_busbw_ring, .simulate = cg_simulate_reduce_scatter};
