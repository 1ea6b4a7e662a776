/* all_reduce — every rank gets op over every rank's input, elementwise (nccl-tests'
 * AllReduce). Its reference backward is itself, as a sum of g. */
#include "collectives.h"

CG_KIND_WORDS(ALL_REDUCE, "all_reduce", 1, 3, "op", "group", NULL, 1, false)

/* nccl-tests' bus bandwidth: a ring moves 2 (W-1)/W of the data per rank */
static double busbw(int world) { return 2.0 * (world - 1) / world; }

const cg_collective cg_kind_all_reduce = {
    CG_C_ALL_REDUCE, .benched = true, .same_shape = true, .shape = CG_SHAPE_SAME,
    .transpose = CG_C_ALL_REDUCE, .busbw_factor = busbw, .simulate = cg_simulate_reduce};
