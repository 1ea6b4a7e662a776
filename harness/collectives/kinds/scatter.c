/* scatter — rank r gets block r of the root's rows. Its transpose is a
 * gather of g to the root. */
#include "collectives.h"

CG_KIND_WORDS(SCATTER, "scatter", 1, 3, "root", "group", NULL, 1, false)

const cg_collective cg_kind_scatter = {
    CG_C_SCATTER, .shape = CG_SHAPE_BLOCK,
    .transpose = CG_C_GATHER, .busbw_factor = cg_busbw_ring, .simulate = cg_simulate_scatter};
