/* rules_torch_funcol.c — torch-funcol@2.15: the autograd of
 * torch.distributed._functional_collectives as measured in torch 2.15.0 over
 * gloo (tests/torch/findings-2.15-gloo.txt; design.md section 12 states the same).
 * The differentiable ops are registered in C++
 * (torch/csrc/distributed/c10d/Functional.cpp):
 *
 *   all_reduce: SUM, AVG, MAX and MIN have the reference backward (MAX and
 *       MIN split g evenly between ties), PRODUCT raises at backward;
 *   ReduceScatterTensor: only SUM has a backward (all_gather_into_tensor,
 *       the reference); the other ops raise.
 * The refusals quote torch 2.15's own messages
 * (torch/distributed/_functional_collectives.py).
 *   AllGatherIntoTensor.backward = reduce_scatter_tensor(grad, "sum") and
 *   AllToAllSingle.backward = all_to_all_single with the splits swapped:
 *       the reference;
 *   broadcast has no autograd formula: the fallback for an op without one
 *       passes the gradient straight through to the input on every rank
 *       (with a warning), the root's and the others' alike.
 *
 * A refusal raises on every rank before any collective, on the op alone, so
 * none waits. Other collectives: reference. */
#include "rules.h"

/* torch's name of a reduce op, as its messages print it ("got 'product'") */
static const char *torch_op_name(cg_redop op)
{
    static const char *names[CG_RED_COUNT] = {"sum", "avg", "product", "max", "min"};
    return op < CG_RED_COUNT ? names[op] : "?";
}

static int funcol_backward(cg_rule_call *call)
{
    cg_coll_kind k = call->coll->kind;
    cg_redop op = call->coll->op;
    char why[192];
    if (k == CG_C_ALL_REDUCE && op == CG_RED_PROD) {
        snprintf(why, sizeof why, "_functional_collectives (all_reduce backward only supports `sum`, "
                 "`premul_sum`, `avg`, `max`, `min` reductions, got '%s')", torch_op_name(op));
        return cg_rules_unsupported(call, why);
    }
    if (k == CG_C_REDUCE_SCATTER && op != CG_RED_SUM) {
        snprintf(why, sizeof why, "_functional_collectives (reduce_scatter_tensor backward only supports "
                 "'sum' reduction, got '%s')", torch_op_name(op));
        return cg_rules_unsupported(call, why);
    }
    if (k == CG_C_BROADCAST)
        return cg_rules_pass_gradient(call); /* no formula: the fallback's identity */
    return cg_reference_backward(call);
}

static const cg_backward_doc torch_funcol_docs[] = {
    {CG_C_ALL_REDUCE, CG_RED_PROD, "raises: backward supports sum, premul_sum, avg, max, min"},
    {CG_C_REDUCE_SCATTER, CG_RED_AVG, "raises: only sum has a backward"},
    {CG_C_REDUCE_SCATTER, CG_RED_PROD, "raises: only sum has a backward"},
    {CG_C_REDUCE_SCATTER, CG_RED_MAX, "raises: only sum has a backward"},
    {CG_C_REDUCE_SCATTER, CG_RED_MIN, "raises: only sum has a backward"},
    {CG_C_BROADCAST, CG_DOC_ANY_OP,
     "dx_i = g_i on every rank: no autograd formula, the gradient passes "
     "straight through (silently wrong off the root)"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_torch_funcol = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "torch-funcol@2.15",
    .emulates =
        "torch.distributed._functional_collectives in torch 2.15: all_reduce PRODUCT and "
        "reduce_scatter's non-SUM ops raise at backward, broadcast passes g straight through",
    .see = "torch/csrc/distributed/c10d/Functional.cpp (AllGatherIntoTensor, "
           "ReduceScatterTensor, AllToAllSingle); torch/distributed/_functional_collectives.py",
    .wiring = cg_wiring_all_collective,
    .backward = funcol_backward,
    .docs = torch_funcol_docs,
    .measured = "torch 2.15.0 over gloo (tests/e2e/torch_suite.sh with COLLGRAD_PYTHON naming it; "
                "tests/torch/findings-2.15-gloo.txt)",
};

/* torch 2.4: the functional collectives have no autograd formula at all.
 * The fallback for an op without one (mode "warn") gives the output a
 * grad_fn whose backward returns nothing for the input: every collective's
 * input gets no gradient, on every rank, and no backward collective runs.
 * Measured with torch 2.4.0 over gloo (findings-2.4-gloo.txt). */
static int funcol_2_4_backward(cg_rule_call *call)
{
    switch (call->coll->kind) {
    case CG_C_ALL_REDUCE:
    case CG_C_ALL_GATHER:
    case CG_C_REDUCE_SCATTER:
    case CG_C_BROADCAST:
    case CG_C_REDUCE:
    case CG_C_GATHER:
    case CG_C_SCATTER:
    case CG_C_ALL_TO_ALL: return 0;              /* gx stays zero */
    default: return cg_reference_backward(call); /* what it says of any other kind */
    }
}

static const cg_backward_doc torch_funcol_2_4_docs[] = {
    {CG_C_ALL_REDUCE, CG_DOC_ANY_OP, "nothing: no autograd formula, the input gets no gradient"},
    {CG_C_ALL_GATHER, CG_DOC_ANY_OP, "nothing: no autograd formula, the input gets no gradient"},
    {CG_C_REDUCE_SCATTER, CG_DOC_ANY_OP,
     "nothing: no autograd formula, the input gets no gradient"},
    {CG_C_BROADCAST, CG_DOC_ANY_OP, "nothing: no autograd formula, the input gets no gradient"},
    {CG_C_ALL_TO_ALL, CG_DOC_ANY_OP, "nothing: no autograd formula, the input gets no gradient"},
    {CG_C_COUNT, 0, NULL},
};

const cg_rules cg_rules_torch_funcol_2_4 = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "torch-funcol@2.4",
    .emulates =
        "torch.distributed._functional_collectives in torch 2.4: no autograd formula, so no "
        "collective's input gets a gradient",
    .see = "torch/distributed/_functional_collectives.py (2.4: no autograd registration); "
           "torch/csrc/autograd/autograd_not_implemented_fallback.cpp",
    .wiring = cg_wiring_all_collective,
    .backward = funcol_2_4_backward,
    .docs = torch_funcol_2_4_docs,
    .measured = "torch 2.4.0 over gloo (tests/e2e/torch_suite.sh with COLLGRAD_PYTHON naming it; "
                "tests/torch/findings-2.4-gloo.txt)",
};
