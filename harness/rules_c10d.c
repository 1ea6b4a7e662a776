/* rules_c10d.c — the `c10d` rule set: plain torch.distributed collectives,
 * which are not autograd functions (torch/distributed/distributed_c10d.py).
 *
 * all_reduce, broadcast and reduce write their result into the input tensor
 * in place; autograd never records them, so a gradient flows through the
 * tensor as if the collective had not happened (dx = dy, identity). The
 * out-of-place ones (all_gather, reduce_scatter, gather, scatter,
 * all_to_all, and recv) fill fresh tensors without a grad_fn: no gradient
 * reaches their input, and a backward that starts only from them fails with
 * "element 0 of tensors does not require grad" (seed 003; pytorch#58005
 * shows the identity numbers 20 and 30). No backward formula ever runs. */
#include "rules.h"

static cg_wiring c10d_wiring(const cg_coll *c)
{
    switch (c->kind) {
    case CG_C_ALL_REDUCE:
    case CG_C_BROADCAST:
    case CG_C_REDUCE:
        return CG_WIRE_IDENTITY;
    default:
        return CG_WIRE_DETACHED;
    }
}

/* Unreachable through the worker: no c10d collective is wired to a node. */
static int c10d_backward(cg_rule_call *call)
{
    return cg_rules_fail(call, "c10d collectives have no autograd node (identity or detached "
                               "wiring), so no backward formula exists");
}

const cg_rules cg_rules_c10d = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "c10d",
    .emulates = "torch.distributed without autograd: in-place collectives are identity, "
                "out-of-place outputs are detached",
    .see = "torch/distributed/distributed_c10d.py; pytorch/pytorch#58005",
    .wiring = c10d_wiring,
    .backward = c10d_backward,
};
