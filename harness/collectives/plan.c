/* plan.c — shapes and counts of a planned collective on one rank (plan.h),
 * by the shape rule of its row in the table of collectives. */
#include "plan.h"

#include <string.h>

int64_t cg_plan_numel(const cg_plan_event *ev, int r)
{
    int64_t n = 1;
    for (int d = 0; d < ev->ndim[r]; d++)
        n *= ev->shape[r][d];
    return n;
}

int64_t cg_plan_rows(const cg_plan_event *ev, int r) { return ev->ndim[r] ? ev->shape[r][0] : 1; }

int64_t cg_plan_row_size(const cg_plan_event *ev, int r)
{
    int64_t rows = cg_plan_rows(ev, r);
    return rows ? cg_plan_numel(ev, r) / rows : 1;
}

void cg_plan_out_shape(const cg_plan_event *ev, int world, int me, int *ndim, int64_t shape[CG_MAX_DIMS])
{
    const cg_collective *d = cg_collective_of(ev->coll.kind);
    int root = ev->coll.root;
    /* row-wise rules keep the row shape of the rank whose rows they cut */
    int src = d->shape == CG_SHAPE_BLOCK && cg_coll_has_root(d->kind) ? root : me;
    *ndim = ev->ndim[src];
    memcpy(shape, ev->shape[src], sizeof ev->shape[src]);
    if (d->shape == CG_SHAPE_SAME || d->shape == CG_SHAPE_P2P)
        return;
    if (*ndim == 0) /* a 0-d input is one row */
        *ndim = 1, shape[0] = 1;
    int64_t rows = 0;
    switch (d->shape) {
    case CG_SHAPE_CAT:
        for (int r = 0; r < world; r++)
            rows += cg_plan_rows(ev, r);
        shape[0] = d->root_only_output && me != root ? 0 : rows;
        break;
    case CG_SHAPE_BLOCK: shape[0] = cg_plan_block_rows(ev, world, src, me); break;
    case CG_SHAPE_BLOCKS:
        for (int j = 0; j < world; j++)
            rows += cg_plan_block_rows(ev, world, j, me);
        shape[0] = rows;
        break;
    default: break;
    }
}

void cg_plan_counts(const cg_plan_event *ev, int world, int me, cg_coll_counts *c)
{
    const cg_collective *d = cg_collective_of(ev->coll.kind);
    int src = cg_coll_has_root(d->kind) && d->shape == CG_SHAPE_BLOCK ? ev->coll.root : me;
    for (int r = 0; r < world; r++) {
        c->inputs[r] = (size_t)cg_plan_numel(ev, r);
        c->blocks[r] = (size_t)(cg_plan_block_rows(ev, world, src, r) * cg_plan_row_size(ev, src));
        c->recv[r] = (size_t)(cg_plan_block_rows(ev, world, r, me) * cg_plan_row_size(ev, r));
    }
}
