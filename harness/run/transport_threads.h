/* transport_threads.h — W ranks as W threads of one process: a transport
 * over shared memory (collgrad_transport.h's table), and a runner that runs
 * a case under one rule set on every rank at once.
 *
 * It serves the diagnosis of runs that happened outside the tool (a real
 * framework's ranks, backend_pytorch.c): the emulations it compares with are
 * re-run here, in the launcher's own process, without MPI. Every collective
 * publishes each rank's buffers, meets at a barrier, computes its own output
 * from the others' inputs into private memory, meets again, and only then
 * writes its output, so in-place calls are safe. Reductions fold in rank
 * order in double and round to the dtype at every step, as the MPI
 * transport's do. Sends are buffered (copied into the receiver's mailbox).
 *
 * Failure: a rank whose program fails aborts the shared state, so ranks
 * waiting in a collective for it return -1 ("rank R failed ...") instead of
 * waiting forever; a rank that finished its program likewise ends every wait
 * for it. A recv waits for its sender only (its message, or its end): the
 * sender may still send after another rank failed. A wait longer than
 * CG_THREADS_WAIT_LIMIT seconds aborts too.
 *
 * Ownership: cg_threads_run_rules owns every thread and buffer it makes and
 * frees them before returning; obs receives malloc'd arrays (cg_observed_free). */
#ifndef CG_TRANSPORT_THREADS_H
#define CG_TRANSPORT_THREADS_H

#include "diagnose.h"
#include "observed.h"
#include "oracle.h"
#include "rules.h"

#define CG_THREADS_WAIT_LIMIT 60

/* A transport that delivers a collective's results in the wrong rank order,
 * a hypothesis the diagnosis tests by re-running the case (the reference
 * rules) over it: rank r's reduce_scatter block, or all_gather's block r,
 * is rank from(r)'s instead, from(r) = W-1-r (shift < 0) or r + shift mod W.
 * Only between blocks of equal size. */
typedef enum { CG_MISORDER_NONE, CG_MISORDER_REDUCE_SCATTER, CG_MISORDER_ALL_GATHER } cg_misorder_kind;
typedef struct cg_misorder {
    cg_misorder_kind kind;
    int shift;
} cg_misorder;

/* Run cs at plan->world under `rules`, one thread per rank, the tensors in
 * the case dtype (as a worker's). Fills obs with every rank's final bindings
 * (values and gradients) and its error, if any. Returns 0, or -1 with st
 * when threads or memory could not be had. */
int cg_threads_run_rules(const cg_case *cs, const cg_oracle *plan, const cg_rules *rules,
                         cg_observed *obs, cg_status *st);

/* cg_threads_run_rules over a transport that misorders as m says. */
int cg_threads_run_misordered(const cg_case *cs, const cg_oracle *plan, cg_misorder m, cg_observed *obs,
                              cg_status *st);

/* The runs a diagnosis compares with (diagnose.h): every built-in emulation
 * (each rule set but the reference) on threads, `first` (a rule set's name,
 * or NULL) before the others, since where several give the same numbers the
 * diagnosis names the first; then the reference over a transport that
 * delivers reduce_scatter's or all_gather's blocks reversed or rotated by
 * one (runs named "wrong_rank_order", diagnose.c's mistake). A rank that fails under an emulation ends every
 * wait for it (above), so an emulation that raises on one rank only is a
 * run with that rank's error, never a hang. Fills runs[0..n) (obs NULL for a
 * run that could not be made) from obs[0..max); returns n. The caller frees
 * each obs[i] (cg_observed_free). */
int cg_threads_run_emulations(const cg_case *cs, const cg_oracle *plan, const char *first, cg_observed *obs,
                              cg_rule_run *runs, int max);

#endif
