/* broadcast — every rank gets the root's input; the transport works in place
 * on one buffer. Its transpose is a reduce of g to the root. */
#include "collectives.h"

CG_KIND_WORDS(BROADCAST, "broadcast", 1, 3, "root", "group", NULL, 1, false)

const cg_collective cg_kind_broadcast = {
    CG_C_BROADCAST, .benched = true, .same_shape = true, .in_place = true, .shape = CG_SHAPE_SAME,
    .transpose = CG_C_REDUCE, .busbw_factor = cg_busbw_one, .simulate = cg_simulate_broadcast};
