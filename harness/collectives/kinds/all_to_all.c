/* all_to_all — rank r gets block r of every rank's rows, concatenated in rank
 * order (balanced, or the call's splits). Its transpose is an all_to_all of
 * g with the splits swapped. */
#include "collectives.h"

CG_KIND_WORDS(ALL_TO_ALL, "all_to_all", 1, 4, "send_splits", "recv_splits", "group", 1, false)

const cg_collective cg_kind_all_to_all = {
    CG_C_ALL_TO_ALL, .benched = true, .shape = CG_SHAPE_BLOCKS,
    .transpose = CG_C_ALL_TO_ALL, .busbw_factor = cg_busbw_ring, .simulate = cg_simulate_all_to_all};
