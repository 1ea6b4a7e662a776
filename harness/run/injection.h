/* injection.h — the verdict on an --inject self-test: a fault that changed
 * nothing tested nothing, so a run whose spec injected nothing fails (exit 2,
 * "injected nothing") instead of passing every check.
 *
 * Counts come from two places: data faults count the calls whose values
 * they visibly changed on each rank (transport_fault.h), summed per job into
 * each case result's `injected`; hang and exit faults mark the rank's board
 * slot when they fire, which the launcher adds to rep->injected. */
#ifndef CG_INJECTION_H
#define CG_INJECTION_H

#include "cli.h"
#include "result.h"

/* With o->inject set: add every case's count to rep->injected, record the
 * verdict in the report and, when nothing was injected, say why on stderr
 * and return at least CG_EXIT_USAGE. Otherwise returns rc unchanged. */
int cg_injection_verdict(const cg_options *o, cg_report *rep, int rc);

#endif
