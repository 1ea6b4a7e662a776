/* recv — the message from one peer (recv(src)), shaped as its send. Its
 * backward sends g back to the source. */
#include "collectives.h"

CG_KIND_WORDS(RECV, "recv", 1, 1, NULL, NULL, NULL, -1, false)

const cg_collective cg_kind_recv = {
    CG_C_RECV, .p2p = true, .shape = CG_SHAPE_P2P, .transpose = CG_C_SEND, .busbw_factor = cg_busbw_one};
