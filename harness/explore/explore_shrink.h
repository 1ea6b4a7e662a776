/* explore_shrink.h — reducing a program that disagrees to a small one that
 * disagrees the same way (design.md section 15: delta debugging over
 * statements, world, groups, shapes, values).
 *
 * A candidate is kept only when `judge` gives it the program's class again,
 * so a reduction that makes the program invalid (the generator's class) or
 * makes it pass ("") is dropped. Reductions, repeated until none applies:
 * delete a run of 3, 2 or 1 statement lines (backward calls included; a
 * send goes with its recv, an on-block's lines together), bypass a call
 * ("y = f(a, ...)" becomes "y = a"; a send and its recv become "y = a") and
 * inline the alias that leaves, lower the world,
 * move a process group's calls to the whole world (drop their group=),
 * halve a param's dimensions, make the params' values small whole numbers.
 * No single statement can then be deleted. */
#ifndef CG_EXPLORE_SHRINK_H
#define CG_EXPLORE_SHRINK_H

#include "explore_run.h"

/* The class `judge` gives text, into cls. */
typedef void (*cg_shrink_judge)(const char *text, char cls[CG_CLASS_LEN], void *ctx);

/* The smallest program found, malloc'd (NULL when out of memory); its
 * statements in *statements and the judge's calls in *tries. */
char *cg_explore_shrink(const char *text, const char *cls, cg_shrink_judge judge, void *ctx, int *statements,
                        int *tries);

/* The statements of a program (lines that are neither its header nor blank
 * nor comments). */
int cg_explore_statements(const char *text);

#endif
