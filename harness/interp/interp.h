/* interp.h — runs a case's program for a set of rank slots.
 *
 * One interpreter serves the oracle (W slots, f64) and a worker (1 slot, the
 * case dtype): it evaluates every statement for all active slots together,
 * so that a collective sees every participating slot's operand at once.
 *
 * Ownership: the caller owns the graph and the comm; the interpreter owns its
 * environments and frees them in cg_interp_free. Tensors live in the graph.
 *
 * Failure: cg_interp_run returns 0, or -1 with cg_interp_status() holding
 * "file:line:col: expected ..., got ... (rank R, world W)" and its class. */
#ifndef CG_INTERP_H
#define CG_INTERP_H

#include "comm.h"
#include "ir.h"

/* One named tensor binding in one slot. */
typedef struct cg_binding {
    const char *name;   /* owned by the case */
    cg_tensor *t;
    int stmt;           /* statement index that bound it */
} cg_binding;

/* A finite-difference perturbation: after statement `stmt` binds `name` on
 * `rank`, element `elem` of the new value is replaced by value + delta. */
typedef struct cg_perturb {
    int rank, stmt;
    const char *name;
    int64_t elem;
    double delta;
} cg_perturb;

typedef struct cg_interp cg_interp;

/* Replicated values (the oracle's; oracles/sim_run.h). With `on`, where the
 * slots of a group evaluate the same op of the same operands (the same
 * tensors, the same numbers), one tensor is made for all of them, with
 * replicas = the group's size; the simulated collectives do the same for
 * outputs every rank gets (sim_comm.c). A rank's gradient of such a tensor
 * is then its gradient / replicas, exact while every use of it is shared
 * alike (each by a group of all its replicas, or as a root of each). The
 * first use that is not (one rank indexing it by rank, a send of it, an
 * on-block over some of its ranks) is recorded in `broken`, the run stops
 * after that statement (cg_interp_run returns 0), and the oracle runs the
 * program again without sharing. Values are right either way. */
typedef struct cg_share {
    bool on;
    const char *broken; /* NULL, or the first asymmetric use (a static string) */
} cg_share;

/* ranks[0..nslots-1] are the ranks the slots simulate. `dtype` is the storage
 * type of every tensor (f64 for the oracle); inputs are first rounded to the
 * case dtype either way. */
cg_interp *cg_interp_new(const cg_case *cs, int world, const int *ranks, int nslots,
                         cg_dtype dtype, cg_graph *g, cg_comm *comm);
void cg_interp_free(cg_interp *I);
void cg_interp_set_perturb(cg_interp *I, const cg_perturb *p); /* NULL clears */
/* Share replicated values through sh (borrowed; NULL: none), off while a
 * perturbation is set. */
void cg_interp_set_share(cg_interp *I, cg_share *sh);
/* Record the first asymmetric use of a replicated value (sh may be NULL). */
static inline void cg_share_break(cg_share *sh, const char *why)
{
    if (sh && sh->on && !sh->broken)
        sh->broken = why;
}

int cg_interp_run(cg_interp *I);
/* The run's status: its code says whose fault a failure was, CG_EXIT_USAGE
 * (the program's) or CG_EXIT_INFRA (out of memory, a stop: cancel.h). */
const cg_status *cg_interp_status(const cg_interp *I);

/* The final binding of name in slot s, or NULL. */
const cg_binding *cg_interp_lookup(const cg_interp *I, int slot, const char *name);
/* All final bindings of slot s, in first-binding order. */
int cg_interp_bindings(const cg_interp *I, int slot, const cg_binding **out);

/* Evaluate an expectation's "= EXPR" for one slot after the run: returns a
 * tensor (a scalar becomes 0-d), or NULL with the error set. */
cg_tensor *cg_interp_eval_expect(cg_interp *I, const cg_expr *e, int slot);

#endif
