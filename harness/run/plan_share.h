/* plan_share.h — one oracle per job, not one per rank.
 *
 * Every rank needs the job's communication plan (the other ranks' shapes:
 * rank_comm.h); only rank 0 needs the gradients. Rank 0 runs the oracle and
 * broadcasts its verdict and its plan over MPI_COMM_WORLD; the other ranks
 * get an oracle that holds just those (no tensors), so W ranks sharing a
 * machine do not run W copies of the simulation.
 *
 * Ownership: the result is the caller's, freed with cg_oracle_free. */
#ifndef CG_PLAN_SHARE_H
#define CG_PLAN_SHARE_H

#include "oracle.h"

/* Collective over MPI_COMM_WORLD (every rank calls it for the same case at
 * the same world). Returns the oracle (rank 0: complete; others: status,
 * error and events), or NULL when out of memory or MPI failed on this rank
 * — the caller then fails the job as an infrastructure error. */
cg_oracle *cg_plan_share(const cg_case *cs, int rank, int world);

#endif
