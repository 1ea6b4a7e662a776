/* reduce — the root gets op over every rank's input; the other ranks'
 * outputs mean nothing. Its transpose is a broadcast of the root's g. */
#include "collectives.h"

CG_KIND_WORDS(REDUCE, "reduce", 1, 4, "root", "op", "group", 1, false)

const cg_collective cg_kind_reduce = {
    CG_C_REDUCE, .same_shape = true, .root_only_output = true, .shape = CG_SHAPE_SAME,
    .transpose = CG_C_BROADCAST, .busbw_factor = cg_busbw_one, .simulate = cg_simulate_reduce};
