/* preflight.h — what a run checks before it launches anything: the names it
 * was given exist (transport, rule set, fault spec), and the selection of
 * cases and world sizes is not empty. A mistake costs one line and exit 2,
 * never a launch that ends in W error messages or a vacuous pass. */
#ifndef CG_PREFLIGHT_H
#define CG_PREFLIGHT_H

#include <stddef.h>

#include "case_set.h"
#include "cli.h"

/* --transport, --rules and --inject: a built-in name from the tool's own
 * tables, or (transport, rules) a plugin path that can be read. Returns 0,
 * or CG_EXIT_USAGE with st naming what is valid. */
int cg_preflight_names(const cg_options *o, cg_status *st);

/* At least one (case, world) job is selected: world is --world, or the size
 * of the MPI world a rank found itself in (0: each case's own worlds).
 * Returns 0, or CG_EXIT_USAGE with st listing the worlds the cases offer.
 * A set with no loadable case and some bad files is not "empty": those are
 * reported as errors. */
int cg_preflight_selection(const cg_options *o, const cg_case_set *set, int world, cg_status *st);

#endif
