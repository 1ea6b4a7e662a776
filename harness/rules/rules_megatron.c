/* rules_megatron.c — the `megatron` rule set: the tensor-parallel region
 * mappings of Megatron-LM (megatron/core/tensor_parallel/mappings.py):
 *
 *   _ReduceFromModelParallelRegion (reduce_from_tensor_model_parallel_region):
 *       forward _reduce (all_reduce SUM), backward grad_output: identity;
 *   _GatherFromModelParallelRegion (gather_from_tensor_model_parallel_region)
 *   and _GatherFromSequenceParallelRegion without tensor_parallel_output_grad:
 *       forward all_gather, backward _split_along_*_dim: the own slice of the
 *       own gradient;
 *   _ReduceScatterToSequenceParallelRegion:
 *       forward reduce_scatter SUM, backward _gather_along_first_dim: the
 *       reference;
 *   _AllToAll: backward all_to_all with the splits swapped: the reference.
 *
 * These are right under replicated semantics only: Megatron treats the loss
 * as one function every tensor-parallel rank holds a copy of, so g is the
 * same on every rank and the identity (g) equals the per-rank truth Σ_r g_r
 * divided by W. Where the ranks' roots differ they are silently wrong.
 *
 * _CopyToModelParallelRegion (identity forward, all_reduce backward) and
 * _ScatterToModelParallelRegion (local split forward, all_gather backward)
 * have no collective in their forward, so a program here cannot express
 * them. Megatron has no autograd for all_reduce with another op, broadcast,
 * reduce, gather or scatter: those are reference. */
#include "rules.h"

static int megatron_backward(cg_rule_call *call)
{
    switch (call->coll->kind) {
    case CG_C_ALL_REDUCE:
        if (call->coll->op == CG_RED_SUM)
            return cg_rules_pass_gradient(call);
        return cg_reference_backward(call);
    case CG_C_ALL_GATHER:
        return cg_rules_keep_own_slice(call);
    default:
        return cg_reference_backward(call);
    }
}

static const cg_backward_doc megatron_docs[] = {
    {CG_C_ALL_REDUCE, CG_RED_SUM, "identity (reduce_from_tensor_model_parallel_region): dx_i = g_i, right "
                                  "only when every rank holds the same loss (replicated semantics)"},
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "the own slice of the own g (gather_from_..._region's split), right only "
                                     "under replicated semantics"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_megatron = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "megatron",
    .emulates = "Megatron-LM tensor-parallel mappings: reduce_from (all_reduce SUM) backward is "
                "identity, gather_from (all_gather) backward keeps the own slice; right under "
                "replicated semantics only",
    .see = "NVIDIA/Megatron-LM megatron/core/tensor_parallel/mappings.py",
    .wiring = cg_wiring_all_collective,
    .backward = megatron_backward,
    .docs = megatron_docs,
};
