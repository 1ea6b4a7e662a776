/* list.h — --list prints exactly the selection a run with the same options
 * would make: every selected case with the world sizes it would run at, the
 * files that did not load (the run reports them as errored tests), and the
 * counts "N cases, J jobs, E errors". */
#ifndef CG_LIST_H
#define CG_LIST_H

#include "case_set.h"
#include "cli.h"

/* Print the list to stdout. The run's exit status for the selection alone:
 * 0, or 2 when a file did not load; 3 out of memory. */
int cg_list_selection(const cg_options *o, const cg_case_set *set);

#endif
