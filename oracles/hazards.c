/* hazards.c — find, before running, the communication whose backward an
 * engine that runs only nodes reachable from its rank's roots (PyTorch's)
 * would not reach on some rank: there, the ranks that do reach it wait
 * forever (hazards.h); and refuse a program the tool's own ranks could not
 * run. Both read each rank's reach from a dry run of its program
 * (dry_reach.h). */
#include "hazards.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dry_reach.h"

enum { MAX_EVENTS = CG_DRY_MAX_EVENTS };

static int add_warning(char ***out, int *n, const char *text)
{
    for (int i = 0; i < *n; i++)
        if (strcmp((*out)[i], text) == 0)
            return 0;
    char **w = realloc(*out, (size_t)(*n + 1) * sizeof *w);
    if (!w)
        return -1;
    *out = w;
    if (!(w[*n] = strdup(text)))
        return -1;
    (*n)++;
    return 0;
}

static const cg_plan_event *event_of(const cg_oracle *plan, int seq, int rank)
{
    for (int i = 0; i < plan->nevents; i++)
        if (plan->events[i].coll.seq == seq && (plan->events[i].rank < 0 || plan->events[i].rank == rank))
            return &plan->events[i];
    return NULL;
}

/* What one rank's backward calls reach, all together (its roots in every
 * event it calls backward in, and the sends, which always run): a recv none
 * of them reaches is unused, a collective none reaches is one its peers wait
 * in forever. reached[r] is then that union; each real[r][e] says whether r
 * calls backward at event e. */
static void union_reached(int W, signed char *const *rows, signed char *const *real, int nseq, int nevents,
                          signed char **reached)
{
    size_t stride = (size_t)nseq + 1;
    for (int r = 0; r < W; r++) {
        memcpy(reached[r], rows[r] + (size_t)(MAX_EVENTS - 1) * stride, stride); /* the sends' reach */
        for (int e = 0; e < nevents && e < MAX_EVENTS - 1; e++)
            for (int seq = 0; seq < nseq && real[r][e]; seq++)
                if (rows[r][(size_t)e * stride + (size_t)seq] == 1)
                    reached[r][seq] = 1;
    }
}

/* One backward event, or (calling = NULL) every rank's backward calls
 * together: compare what each rank reaches. At one event only the ranks that
 * call backward there are compared: a rank whose block holds no backward at
 * that statement runs its own later, and its recvs are reached there. */
static int check_event(const cg_oracle *plan, signed char **reached, const bool *calling, int nseq, char ***out,
                       int *n)
{
    int W = plan->world;
    char text[512];
    for (int seq = 0; seq < nseq; seq++) {
        int yes = 0;
        for (int r = 0; r < W; r++)
            yes += reached[r][seq] == 1 && (!calling || calling[r]);
        for (int r = 0; r < W; r++) {
            const cg_plan_event *ev = event_of(plan, seq, r);
            if (!ev || reached[r][seq] != 0 || (calling && !calling[r]))
                continue;
            if (ev->coll.kind == CG_C_RECV)
                snprintf(text, sizeof text, "rank %d's recv #%d from rank %d (%s:%d) " CG_HAZARD_UNUSED_RECV
                         ", so an engine that runs only reachable nodes (PyTorch's) never sends its gradient "
                         "back and rank %d's send waits forever",
                         r, seq, ev->coll.peer, ev->coll.pos.file, ev->coll.pos.line, ev->coll.peer);
            else if (ev->coll.kind != CG_C_SEND && yes > 0)
                snprintf(text, sizeof text, "rank %d " CG_HAZARD_UNREACHED " %s #%d (%s:%d) from its roots "
                         "while %d other rank(s) do: an engine that runs only reachable nodes (PyTorch's) "
                         "hangs there", r, cg_coll_name(ev->coll.kind), seq, ev->coll.pos.file, ev->coll.pos.line,
                         yes);
            else
                continue;
            if (add_warning(out, n, text) != 0)
                return -1;
        }
    }
    return 0;
}

int cg_find_hazards(const cg_case *cs, const cg_oracle *plan, char ***warnings, int *nwarnings, cg_status *st)
{
    *warnings = NULL;
    *nwarnings = 0;
    int W = plan->world, nseq = cg_dry_count_seq(plan), rc = 0;
    if (nseq == 0)
        return 0; /* no communication call: nothing any rank could wait in */
    size_t stride = (size_t)nseq + 1;
    cg_dry_reach s;
    rc = cg_dry_reach_all(cs, plan, nseq, &s, st);
    signed char **reached = calloc((size_t)W, sizeof *reached); /* one event's row per rank */
    signed char *all = calloc((size_t)W, stride);                /* every rank's union */
    bool *calling = calloc((size_t)W, sizeof *calling);
    if (rc == 0 && (!reached || !all || !calling))
        rc = cg_error_infra(st, "out of memory");
    for (int e = 0; rc == 0 && e < s.nevents && e < MAX_EVENTS - 1; e++) {
        for (int r = 0; r < W; r++) {
            reached[r] = s.rows[r] + (size_t)e * stride;
            calling[r] = s.real[r][e];
        }
        rc = check_event(plan, reached, calling, nseq, warnings, nwarnings);
    }
    if (rc == 0) { /* and every rank's calls together: a rank that never reaches what another does */
        for (int r = 0; r < W; r++)
            reached[r] = all + (size_t)r * stride;
        union_reached(W, s.rows, s.real, nseq, s.nevents, reached);
        rc = check_event(plan, reached, NULL, nseq, warnings, nwarnings);
    }
    free(reached);
    free(all);
    free(calling);
    cg_dry_reach_free(&s);
    return rc;
}

/* The recv on `peer` that matches rank r's send #seq (its plan tag is the send's seq). */
static int matching_recv(const cg_oracle *plan, int r, int seq, int peer)
{
    for (int i = 0; i < plan->nevents; i++) {
        const cg_plan_event *ev = &plan->events[i];
        if (ev->coll.kind == CG_C_RECV && ev->rank == peer && ev->coll.peer == r && ev->tag == seq)
            return ev->coll.seq;
    }
    return -1;
}

int cg_check_p2p_order(const cg_case *cs, const cg_oracle *plan, cg_status *st)
{
    int W = plan->world, nseq = cg_dry_count_seq(plan);
    bool p2p = false;
    for (int i = 0; i < plan->nevents; i++)
        p2p = p2p || plan->events[i].coll.kind == CG_C_SEND;
    if (!p2p)
        return 0;
    size_t stride = (size_t)nseq + 1;
    cg_dry_reach s;
    int rc = cg_dry_reach_all(cs, plan, nseq, &s, st);
    for (int e = 0; rc == 0 && e < s.nevents && e < MAX_EVENTS - 1; e++)
        for (int r = 0; rc == 0 && r < W; r++)
            for (int seq = 0; rc == 0 && seq < nseq; seq++) {
                const cg_plan_event *ev = event_of(plan, seq, r);
                if (!ev || ev->coll.kind != CG_C_SEND || !s.p2p[r][(size_t)e * stride + (size_t)seq])
                    continue;
                int peer = ev->coll.peer, recv = matching_recv(plan, r, seq, peer);
                if (recv < 0 || recv >= nseq || s.p2p[peer][(size_t)e * stride + (size_t)recv])
                    continue;
                const cg_plan_event *rv = event_of(plan, recv, peer);
                rc = cg_error(st, "rank %d's backward call #%d runs the backward of its send #%d to rank %d "
                              "(%s:%d), which waits for the gradient of rank %d's recv (%s:%d); that recv "
                              "comes after this backward call in rank %d's program, so on MPI or NCCL ranks "
                              "rank %d would wait forever (the oracle runs every rank's backward at once): "
                              "put the backward calls after the recv, or in a block of their own",
                              r, e, seq, peer, ev->coll.pos.file, ev->coll.pos.line, peer,
                              rv ? rv->coll.pos.file : "?", rv ? rv->coll.pos.line : 0, peer, r);
            }
    cg_dry_reach_free(&s);
    return rc;
}
