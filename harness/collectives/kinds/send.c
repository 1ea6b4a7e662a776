/* send — a statement: the message goes to one peer (send(x, dst)). The
 * oracle pairs it with its recv itself (no simulate); its backward receives
 * the gradient back from the destination (the worker wires it). */
#include "collectives.h"

CG_KIND_WORDS(SEND, "send", 2, 2, NULL, NULL, NULL, -1, true)

const cg_collective cg_kind_send = {
    CG_C_SEND, .p2p = true, .shape = CG_SHAPE_P2P, .transpose = CG_C_RECV, .busbw_factor = cg_busbw_one};
