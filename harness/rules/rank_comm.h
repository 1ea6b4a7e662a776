/* rank_comm.h — a worker's cg_comm: the interpreter's collectives become
 * real transport calls, wired into autograd by a rule set.
 *
 * The other ranks' shapes (ragged gathers, recv sizes, p2p tags) come from
 * the oracle's plan of the same program, computed in this process, so no
 * metadata travels over the transport under test.
 *
 * Ownership: the caller owns everything pointed to and keeps it alive while
 * the interpreter runs; the comm owns only the process groups' handles it
 * makes (cg_rank_comm_close). */
#ifndef CG_RANK_COMM_H
#define CG_RANK_COMM_H

#include "comm.h"
#include "plan.h"
#include "rules.h"
#include "transport.h"

typedef struct cg_rank_comm {
    cg_tp *tp;
    const cg_rules *rules;
    int rank, world;
    cg_dtype dtype;              /* the case's dtype: every tensor of the run */
    const cg_plan_event *events; /* the oracle's plan at this world */
    int nevents;
    int passes;                  /* backward passes run */
    cg_tp **groups;              /* the program's process groups (comm.h): this rank's
                                  * handle on each, NULL where it is no member; owned,
                                  * freed by cg_rank_comm_close */
    int ngroups;
} cg_rank_comm;

/* The comm of tp's rank in a run of dtype under rules, with the oracle's plan
 * of the program at tp's world (events[nevents]): no backward passes run yet,
 * no process groups. */
cg_rank_comm cg_rank_comm_make(cg_tp *tp, const cg_rules *rules, cg_dtype dtype, const cg_plan_event *events,
                       int nevents);
cg_comm cg_rank_comm_as_comm(cg_rank_comm *w);
/* Frees the group handles (every rank, after the program ran). */
void cg_rank_comm_close(cg_rank_comm *w);

#endif
