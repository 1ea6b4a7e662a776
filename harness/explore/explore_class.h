/* explore_class.h — the class of a failing program (explore_class.c): what
 * explore counts programs by, shrinks each class's first program against,
 * and reports. Shared by the driver (explore.c) and the shrinking of
 * findings (explore_findings.c). */
#ifndef CG_EXPLORE_CLASS_H
#define CG_EXPLORE_CLASS_H

#include <stdbool.h>

#include "explore_run.h" /* CG_CLASS_LEN */

/* The class of a program run under a built-in rule set, in-process: the
 * ranks on threads (transport_threads.h), judged and diagnosed by the judge
 * library with every emulation's run on threads too; "" when it passes,
 * else "matches A" (the diagnosis's first explanation), "unknown" or
 * "raises", as the report classes below. The program must be one the oracle
 * accepts (cg_explore_oracle_class gave ""). */
void cg_explore_rules_class(const char *text, const char *file, const char *rules, char cls[CG_CLASS_LEN]);

/* The class cg_explore_report_classes gives a reference case that ended in
 * an error (as every case does when mpiexec cannot start the ranks). */
#define CG_EXPLORE_REFERENCE_ERROR "tool: oracle vs MPI reference (error)"

/* For every case of the report at `json`, call each(name, class, ctx) with
 * its class: "" for a pass (or a skip); under `reference` (the reference run
 * must pass) "tool: oracle vs MPI reference (STATUS)"; else, for a run that
 * did not end, "raises: ERROR" (where a rank raised), "hangs as the hazard
 * analysis predicts: ...", "hangs" or "raises", and
 * for one that did, "matches A" (the diagnosis's first explanation),
 * "raises: ERROR" (a rank's error no emulation raises), "shape: ..." (a
 * value of another shape than the oracle's) or "unknown". 0, or -1 when the
 * report cannot be read. */
int cg_explore_report_classes(const char *json, bool reference,
                              void (*each)(const char *name, const char *cls, void *ctx), void *ctx);

#endif
