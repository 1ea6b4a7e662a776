/* explain.h — `collgrad-check --explain CASE` (explain.c). */
#ifndef CG_EXPLAIN_H
#define CG_EXPLAIN_H

#include "case_set.h"
#include "cli.h"

/* Print the case named o->explain (found in set) at each of its world sizes.
 * Returns an exit status (cli.h). */
int cg_explain(const cg_options *o, const cg_case_set *set);

#endif
