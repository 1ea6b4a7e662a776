/* terminal.h — the ctest-like terminal output: a progress line per case,
 * the failing checks under a failed case, and the closing summary line
 * "N passed, N failed, N skipped" (errors count as failed there). */
#ifndef CG_TERMINAL_H
#define CG_TERMINAL_H

#include <stdio.h>

#include "result.h"

void cg_term_case(FILE *f, const cg_case_result *c, int index, int total, bool verbose);
void cg_term_summary(FILE *f, const cg_report *r, double seconds);

#endif
