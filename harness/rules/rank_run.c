/* rank_run.c — see rank_run.h. */
#include "rank_run.h"

#include <string.h>

int cg_rank_run_program(cg_rank_run *r, const cg_case *cs, const cg_rules *rules, cg_tp *tp,
                const cg_plan_event *events, int nevents, bool cuda, cg_rank_wrap wrap, void *ctx)
{
    memset(r, 0, sizeof *r);
    r->rank = tp->rank;
    r->w = cg_rank_comm_make(tp, rules, cs->dtype, events, nevents);
    r->g = cg_graph_new();
    if (!r->g)
        return cg_error_infra(&r->st, "out of memory");
    if (cuda && cg_graph_use_cuda(r->g) < 0)
        return cg_error_infra(&r->st, "%s", cg_graph_status(r->g)->msg);
    r->comm = wrap ? wrap(ctx, &r->w) : cg_rank_comm_as_comm(&r->w);
    r->I = cg_interp_new(cs, tp->world, &r->rank, 1, cs->dtype, r->g, &r->comm);
    if (!r->I)
        return cg_error_infra(&r->st, "out of memory");
    return cg_interp_run(r->I) == 0 ? 0 : -1;
}

void cg_rank_run_end(cg_rank_run *r)
{
    cg_interp_free(r->I);
    cg_graph_free(r->g);
    cg_rank_comm_close(&r->w);
    r->I = NULL;
    r->g = NULL;
}
