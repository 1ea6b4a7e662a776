/* collectives.c — the table of collectives (collectives.h); their names and
 * syntax are the language's (coll_words.h). */
#include "collectives.h"

static double busbw_one(int world) { (void)world; return 1.0; }
static double busbw_ring(int world) { return (double)(world - 1) / world; }        /* gathers, scatters */
static double busbw_all_reduce(int world) { return 2.0 * (world - 1) / world; }

/* One row per collective. `transpose` is the collective that moves g in its
 * reference backward (design.md section 3); `simulate` the oracle's forward. */
static const cg_collective table[CG_C_COUNT] = {
    [CG_C_ALL_REDUCE] = {
        CG_C_ALL_REDUCE, .benched = true, .same_shape = true, .shape = CG_SHAPE_SAME,
        .transpose = CG_C_ALL_REDUCE, .busbw_factor = busbw_all_reduce, .simulate = cg_simulate_reduce},
    [CG_C_ALL_GATHER] = {
        CG_C_ALL_GATHER, .benched = true, .shape = CG_SHAPE_CAT,
        .transpose = CG_C_REDUCE_SCATTER, .busbw_factor = busbw_ring, .simulate = cg_simulate_concat},
    [CG_C_REDUCE_SCATTER] = {
        CG_C_REDUCE_SCATTER, .benched = true, .same_shape = true, .shape = CG_SHAPE_BLOCK,
        .transpose = CG_C_ALL_GATHER, .busbw_factor = busbw_ring, .simulate = cg_simulate_reduce_scatter},
    [CG_C_BROADCAST] = {
        CG_C_BROADCAST, .benched = true, .same_shape = true, .in_place = true, .shape = CG_SHAPE_SAME,
        .transpose = CG_C_REDUCE, .busbw_factor = busbw_one, .simulate = cg_simulate_broadcast},
    [CG_C_REDUCE] = {
        CG_C_REDUCE, .same_shape = true, .root_only_output = true, .shape = CG_SHAPE_SAME,
        .transpose = CG_C_BROADCAST, .busbw_factor = busbw_one, .simulate = cg_simulate_reduce},
    [CG_C_GATHER] = {
        CG_C_GATHER, .root_only_output = true, .shape = CG_SHAPE_CAT,
        .transpose = CG_C_SCATTER, .busbw_factor = busbw_ring, .simulate = cg_simulate_concat},
    [CG_C_SCATTER] = {
        CG_C_SCATTER, .shape = CG_SHAPE_BLOCK,
        .transpose = CG_C_GATHER, .busbw_factor = busbw_ring, .simulate = cg_simulate_scatter},
    [CG_C_ALL_TO_ALL] = {
        CG_C_ALL_TO_ALL, .benched = true, .shape = CG_SHAPE_BLOCKS,
        .transpose = CG_C_ALL_TO_ALL, .busbw_factor = busbw_ring, .simulate = cg_simulate_all_to_all},
    [CG_C_SEND] = {
        CG_C_SEND, .p2p = true, .shape = CG_SHAPE_P2P,
        .transpose = CG_C_RECV, .busbw_factor = busbw_one},
    [CG_C_RECV] = {
        CG_C_RECV, .p2p = true, .shape = CG_SHAPE_P2P,
        .transpose = CG_C_SEND, .busbw_factor = busbw_one},
};

const cg_collective *cg_collective_of(cg_coll_kind k)
{
    return (unsigned)k < CG_C_COUNT ? &table[k] : NULL;
}

const cg_collective *cg_collective_named(const char *name)
{
    int k = cg_coll_from_name(name);
    return k >= 0 ? &table[k] : NULL;
}

bool cg_coll_has_op(cg_coll_kind k) { return cg_coll_keyword_index(k, "op") >= 0; }

bool cg_coll_has_root(cg_coll_kind k) { return cg_coll_keyword_index(k, "root") >= 0; }
