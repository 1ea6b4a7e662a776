/* sim_comm.h — the oracle's cg_comm: collectives become plain differentiable
 * ops across the simulated ranks, send/recv a mailbox, backward a list of
 * roots per rank. Ownership: the sim owns its lists and plan; tensors belong
 * to the graph passed in. */
#ifndef CG_SIM_COMM_H
#define CG_SIM_COMM_H

#include "comm.h"
#include "interp.h"
#include "plan.h"

/* How the simulated collectives differentiate: the truth, or a known mistake
 * kept as a reference for the diagnosis (same forward values, gradients
 * flowing differently). */
typedef enum cg_sim_mode {
    CG_SIM_TRUTH,
    CG_SIM_STRAIGHT_THROUGH, /* each collective is identity on the local input for autograd */
    CG_SIM_LOCAL_SLOT,       /* a gather's backward keeps only the rank's own slice */
} cg_sim_mode;

typedef struct cg_sim cg_sim;

void cg_sim_set_mode(cg_sim *s, cg_sim_mode mode);
/* Replicate the outputs every rank gets alike (interp.h cg_share; sh
 * borrowed, NULL: none) in CG_SIM_TRUTH, and record uses that break it. */
void cg_sim_set_share(cg_sim *s, cg_share *sh);

cg_sim *cg_sim_new(int world);
void cg_sim_free(cg_sim *s);
cg_comm cg_sim_comm(cg_sim *s);

/* After a run: 0, or -1 with st naming a send nobody received. */
int cg_sim_check_mailbox(const cg_sim *s, cg_status *st);
/* Roots of rank r since the last zero_grad; returns their count. */
int cg_sim_roots(const cg_sim *s, int rank, cg_tensor *const **roots);
int cg_sim_nbackward(const cg_sim *s);
/* Hand the recorded plan to the caller (who frees it with cg_plan_free). */
cg_plan_event *cg_sim_take_plan(cg_sim *s, int *nevents);
void cg_plan_free(cg_plan_event *ev, int n);

#endif
