/* rank_comm_internal.h — what the two halves of a rank's communicator share
 * (rank_comm.c: collectives, groups; rank_comm_p2p.c: send, recv, a
 * non-member's call). Not a public interface: rank_comm.h is. */
#ifndef CG_RANK_COMM_INTERNAL_H
#define CG_RANK_COMM_INTERNAL_H

#include "autograd.h"
#include "rank_comm.h"

/* The plan's event of call c on this rank: a send/recv's own, a collective's,
 * or on a process group the one of the group it is in. NULL with the graph's
 * error when the plan lacks it. */
const cg_plan_event *cg_rank_comm_plan_event(const cg_rank_comm *w, cg_graph *g, const cg_coll *c);

/* The refusal's message when the framework the rule set emulates refuses c
 * (rules.h: refuses, refuses_at), NULL when it does not; *phase where this
 * rank raises it. */
const char *cg_rank_comm_refusal(const cg_rank_comm *w, const cg_coll *c, bool member, cg_phase *phase);

/* -1 with the graph's error: "the framework raises at [backward of ]KIND: why". */
int cg_rank_comm_raise(cg_graph *g, const cg_coll *c, const char *why, cg_phase phase);

/* c's members, borrowed from the interpreter, as the graph's own copy. */
int cg_rank_comm_keep_members(cg_graph *g, cg_coll *c);

/* cg_comm's entries (comm.h) that rank_comm_p2p.c implements. */
int cg_rank_comm_send(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *t);
cg_tensor *cg_rank_comm_recv(void *self, cg_graph *g, const cg_coll *c, int slot);
int cg_rank_comm_nonmember(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *in,
                           cg_tensor **out);

#endif
