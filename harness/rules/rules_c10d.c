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
    return cg_error(call->st, "c10d collectives have no autograd node (identity or detached "
                              "wiring), so no backward formula exists");
}

static const cg_backward_doc c10d_docs[] = {
    {CG_C_ALL_REDUCE, CG_DOC_ANY_OP, "identity: in place, autograd never saw it, so the local input gets g "
                                     "unchanged (dx_i = g_i) and no other rank's gradient"},
    {CG_C_BROADCAST, CG_DOC_ANY_OP, "identity: in place, so every rank keeps its own g (dx_i = g_i)"},
    {CG_C_REDUCE, CG_DOC_ANY_OP, "identity: in place, so every rank keeps its own g (dx_i = g_i)"},
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "no gradient: the output has no grad_fn (a backward from it alone raises "
                                     "'does not require grad')"},
    {CG_C_REDUCE_SCATTER, CG_DOC_ANY_OP, "no gradient: the output has no grad_fn"},
    {CG_C_GATHER, CG_DOC_ANY_OP, "no gradient: the output has no grad_fn"},
    {CG_C_SCATTER, CG_DOC_ANY_OP, "no gradient: the output has no grad_fn"},
    {CG_C_ALL_TO_ALL, CG_DOC_ANY_OP, "no gradient: the output has no grad_fn"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_c10d = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "c10d",
    .emulates = "torch.distributed without autograd: in-place collectives are identity, "
                "out-of-place outputs are detached",
    .see = "torch/distributed/distributed_c10d.py; pytorch/pytorch#58005",
    .wiring = c10d_wiring,
    .backward = c10d_backward,
    .docs = c10d_docs,
};
