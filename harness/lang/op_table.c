/* op_table.c — the op table's rows as data (op_table.h), for the layers
 * that read an op's syntax and properties rather than call it. */
#include "op_table.h"

#include <stddef.h>
#include <string.h>

static const cg_op_info rows[CG_FN_COUNT] = {
#define CG_OP_TABLE_INFO(id, name, lo, hi, kw, kwpos, cls, shape, dom, diff, entry)                 \
    [CG_FN_##id] = {name, lo, hi, kw, kwpos, cls, shape, dom, diff},
    CG_OP_TABLE(CG_OP_TABLE_INFO)
#undef CG_OP_TABLE_INFO
};

const cg_op_info *cg_op_info_of(cg_fn_id id)
{
    return (int)id >= 0 && id < CG_FN_COUNT ? &rows[id] : NULL;
}

int cg_op_from_name(const char *name)
{
    for (int i = 0; name && i < CG_FN_COUNT; i++)
        if (strcmp(rows[i].name, name) == 0)
            return i;
    return -1;
}

const char *cg_op_class_name(cg_op_class c)
{
    static const char *const names[] = {
        [CG_OPC_CTOR] = "ctor",   [CG_OPC_LEAF] = "leaf", [CG_OPC_UNARY] = "unary",
        [CG_OPC_BINARY] = "binary", [CG_OPC_AXIS] = "axis", [CG_OPC_AXIS_LAST] = "axis_last",
        [CG_OPC_CALL] = "call",
    };
    return (int)c >= 0 && c <= CG_OPC_CALL ? names[c] : "?";
}

const char *cg_op_shape_name(cg_op_shape s)
{
    static const char *const names[] = {
        [CG_OSH_SIZES] = "sizes",     [CG_OSH_SAME] = "same",         [CG_OSH_BROADCAST] = "broadcast",
        [CG_OSH_MATMUL] = "matmul",   [CG_OSH_SCALAR] = "scalar",     [CG_OSH_REDUCE] = "reduce",
        [CG_OSH_TRANSPOSE] = "transpose", [CG_OSH_CAT] = "cat",       [CG_OSH_RESHAPE] = "reshape",
        [CG_OSH_SLICE] = "slice",     [CG_OSH_PIECES] = "pieces",
    };
    return (int)s >= 0 && s <= CG_OSH_PIECES ? names[s] : "?";
}

const char *cg_op_domain_name(cg_op_domain d)
{
    static const char *const names[] = {[CG_DOM_ANY] = "any", [CG_DOM_POSITIVE] = "positive",
                                        [CG_DOM_LABELS] = "labels"};
    return (int)d >= 0 && d <= CG_DOM_LABELS ? names[d] : "?";
}

const char *cg_op_diff_name(cg_op_diff d)
{
    static const char *const names[] = {[CG_DIFF_SMOOTH] = "smooth", [CG_DIFF_KINK0] = "kink0",
                                        [CG_DIFF_NONE] = "none"};
    return (int)d >= 0 && d <= CG_DIFF_NONE ? names[d] : "?";
}
