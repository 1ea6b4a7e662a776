/* process_fault.h — process faults for the tool's own tests: one rank hangs
 * (`hang`) or exits (`exit`, status 7) at its first communication call of a
 * job whose case name contains a filter, so the launcher's deadline, its
 * status board and its reports are tested against a real stuck or dead rank.
 *
 * A watcher (transport.h) stacked on a handle: its before-call fires the
 * fault; the status board, stacked on the same handle, records that the rank
 * stopped before that call (cg_board_stop_before). The data faults
 * (wrong sums, dropped calls: transport_fault.h) are the other family.
 *
 * Ownership: the caller owns the cg_process_fault and keeps it alive as long
 * as the handle it is installed on; the case name it is set to is borrowed
 * for the job. */
#ifndef CG_PROCESS_FAULT_H
#define CG_PROCESS_FAULT_H

#include "status.h"
#include "transport.h"

typedef struct cg_process_fault {
    int kind;              /* CG_PFAULT_HANG or CG_PFAULT_EXIT */
    int rank;              /* the rank that stops */
    char filter[96];       /* a job fires when its case name contains it; "" = every job */
    const char *case_name; /* the job in progress (cg_process_fault_set_case); borrowed */
    int me;                /* this process's rank in the world (set at install: a group
                            * handle's rank is its place in the group) */
} cg_process_fault;

enum { CG_PFAULT_HANG = 1, CG_PFAULT_EXIT = 2 };

/* "hang:RANK[:CASE]" or "exit:RANK[:CASE]" into f. 0, or -1 with st. */
int cg_process_fault_parse(const char *spec, cg_process_fault *f, cg_status *st);
/* Stack f on tp (0, or -1 with tp->st when tp takes no more watchers). */
int cg_process_fault_install(cg_tp *tp, cg_process_fault *f);
/* The job that starts now on this rank (the filter is matched against it). */
void cg_process_fault_set_case(cg_process_fault *f, const char *case_name);

#endif
