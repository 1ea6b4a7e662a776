/* collectives.c — the table of collectives (collectives.h) and the names of
 * the reduction ops. Adding a collective is a row here (and its forward and
 * transpose where the layers above run them). */
#include "collectives.h"

#include <string.h>

static double busbw_one(int world) { (void)world; return 1.0; }
static double busbw_ring(int world) { return (double)(world - 1) / world; }        /* gathers, scatters */
static double busbw_all_reduce(int world) { return 2.0 * (world - 1) / world; }

/* One row per collective. `transpose` is the collective that moves g in its
 * reference backward (DESIGN section 3); `simulate` the oracle's forward. */
static const cg_collective table[CG_C_COUNT] = {
    [CG_C_ALL_REDUCE] = {
        CG_C_ALL_REDUCE, "all_reduce", .op_arg = 1, .same_shape = true, .shape = CG_SHAPE_SAME,
        .transpose = CG_C_ALL_REDUCE, .busbw_factor = busbw_all_reduce, .simulate = cg_simulate_reduce},
    [CG_C_ALL_GATHER] = {
        CG_C_ALL_GATHER, "all_gather", .op_arg = -1, .shape = CG_SHAPE_CAT,
        .transpose = CG_C_REDUCE_SCATTER, .busbw_factor = busbw_ring, .simulate = cg_simulate_concat},
    [CG_C_REDUCE_SCATTER] = {
        CG_C_REDUCE_SCATTER, "reduce_scatter", .op_arg = 1, .same_shape = true, .shape = CG_SHAPE_BLOCK,
        .transpose = CG_C_ALL_GATHER, .busbw_factor = busbw_ring, .simulate = cg_simulate_reduce_scatter},
    [CG_C_BROADCAST] = {
        CG_C_BROADCAST, "broadcast", .op_arg = -1, .takes_root = true, .same_shape = true,
        .in_place = true, .shape = CG_SHAPE_SAME,
        .transpose = CG_C_REDUCE, .busbw_factor = busbw_one, .simulate = cg_simulate_broadcast},
    [CG_C_REDUCE] = {
        CG_C_REDUCE, "reduce", .op_arg = 2, .takes_root = true, .same_shape = true,
        .root_only_output = true, .shape = CG_SHAPE_SAME,
        .transpose = CG_C_BROADCAST, .busbw_factor = busbw_one, .simulate = cg_simulate_reduce},
    [CG_C_GATHER] = {
        CG_C_GATHER, "gather", .op_arg = -1, .takes_root = true, .root_only_output = true,
        .shape = CG_SHAPE_CAT,
        .transpose = CG_C_SCATTER, .busbw_factor = busbw_ring, .simulate = cg_simulate_concat},
    [CG_C_SCATTER] = {
        CG_C_SCATTER, "scatter", .op_arg = -1, .takes_root = true, .shape = CG_SHAPE_BLOCK,
        .transpose = CG_C_GATHER, .busbw_factor = busbw_ring, .simulate = cg_simulate_scatter},
    [CG_C_ALL_TO_ALL] = {
        CG_C_ALL_TO_ALL, "all_to_all", .op_arg = -1, .shape = CG_SHAPE_BLOCKS,
        .transpose = CG_C_ALL_TO_ALL, .busbw_factor = busbw_ring, .simulate = cg_simulate_all_to_all},
    [CG_C_SEND] = {
        CG_C_SEND, "send", .op_arg = -1, .p2p = true, .shape = CG_SHAPE_P2P,
        .transpose = CG_C_RECV, .busbw_factor = busbw_one},
    [CG_C_RECV] = {
        CG_C_RECV, "recv", .op_arg = -1, .p2p = true, .shape = CG_SHAPE_P2P,
        .transpose = CG_C_SEND, .busbw_factor = busbw_one},
};

static const char *const redop_names[CG_RED_COUNT] = {"sum", "avg", "prod", "max", "min"};

const cg_collective *cg_collective_of(cg_coll_kind k)
{
    return (unsigned)k < CG_C_COUNT ? &table[k] : NULL;
}

const cg_collective *cg_collective_named(const char *name)
{
    for (int k = 0; name && k < CG_C_COUNT; k++)
        if (strcmp(name, table[k].name) == 0)
            return &table[k];
    return NULL;
}

const char *cg_coll_name(cg_coll_kind k)
{
    const cg_collective *c = cg_collective_of(k);
    return c ? c->name : "?";
}

int cg_coll_from_name(const char *s)
{
    const cg_collective *c = cg_collective_named(s);
    return c ? (int)c->kind : -1;
}

bool cg_coll_has_op(cg_coll_kind k)
{
    const cg_collective *c = cg_collective_of(k);
    return c && c->op_arg >= 0;
}

bool cg_coll_has_root(cg_coll_kind k)
{
    const cg_collective *c = cg_collective_of(k);
    return c && c->takes_root;
}

const char *cg_redop_name(cg_redop op) { return (unsigned)op < CG_RED_COUNT ? redop_names[op] : "?"; }

int cg_redop_from_name(const char *s)
{
    for (int k = 0; k < CG_RED_COUNT; k++)
        if (strcmp(s, redop_names[k]) == 0)
            return k;
    return -1;
}
