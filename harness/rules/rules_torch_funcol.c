/* rules_torch_funcol.c — the `torch-funcol` rule set: the autograd of
 * torch.distributed._functional_collectives, whose differentiable ops are
 * registered in C++ (torch/csrc/distributed/c10d/Functional.cpp):
 *
 *   AllGatherIntoTensor.backward = reduce_scatter_tensor(grad, "sum")
 *       the reference;
 *   ReduceScatterTensor: TORCH_CHECK(reduce_op == "sum",
 *       "Only sum reduce op is supported"), backward = all_gather_into_tensor
 *       — the reference for SUM, nothing at all for the other ops;
 *   AllToAllSingle.backward = all_to_all_single with the splits swapped
 *       — the reference.
 *
 * all_reduce follows the same rule (DESIGN section 4): SUM's backward is
 * all_reduce(g, sum), the reference; AVG, PROD, MAX and MIN raise. PyTorch
 * refuses reduce_scatter's other ops already in the forward; here every rule
 * set computes the same forward, so the refusal surfaces in the backward,
 * where a case can expect it: `expect error rules=torch-funcol "is not
 * supported"`. Each rank raises before any collective, on the op alone, so
 * every rank raises together and none waits. Other collectives: reference. */
#include "rules.h"

static int funcol_backward(cg_rule_call *call)
{
    cg_coll_kind k = call->coll->kind;
    bool has_op = k == CG_C_ALL_REDUCE || k == CG_C_REDUCE_SCATTER;
    if (has_op && call->coll->op != CG_RED_SUM)
        return cg_rules_unsupported(call, "_functional_collectives (only sum)");
    return cg_reference_backward(call);
}

static const cg_backward_doc torch_funcol_docs[] = {
    {CG_C_ALL_REDUCE, CG_RED_AVG, "raises: only sum has a backward"},
    {CG_C_ALL_REDUCE, CG_RED_PROD, "raises: only sum has a backward"},
    {CG_C_ALL_REDUCE, CG_RED_MAX, "raises: only sum has a backward"},
    {CG_C_ALL_REDUCE, CG_RED_MIN, "raises: only sum has a backward"},
    {CG_C_REDUCE_SCATTER, CG_RED_AVG, "raises: only sum is supported"},
    {CG_C_REDUCE_SCATTER, CG_RED_PROD, "raises: only sum is supported"},
    {CG_C_REDUCE_SCATTER, CG_RED_MAX, "raises: only sum is supported"},
    {CG_C_REDUCE_SCATTER, CG_RED_MIN, "raises: only sum is supported"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_torch_funcol = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "torch-funcol",
    .emulates = "torch.distributed._functional_collectives: SUM only; the backward of "
                "all_reduce and reduce_scatter with AVG, PROD, MAX or MIN raises",
    .see = "torch/csrc/distributed/c10d/Functional.cpp (AllGatherIntoTensor, "
           "ReduceScatterTensor, AllToAllSingle); torch/distributed/_functional_collectives.py",
    .wiring = cg_wiring_all_collective,
    .backward = funcol_backward,
    .docs = torch_funcol_docs,
};
