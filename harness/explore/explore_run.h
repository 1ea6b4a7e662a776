/* explore_run.h — how explore judges programs: in-process by the oracle and
 * finite differences, and through the tool itself (a child process on a
 * folder of case files) for the MPI reference and the backend under test.
 * Shared by the driver (explore.c) and the shrinker (explore_shrink.c). */
#ifndef CG_EXPLORE_RUN_H
#define CG_EXPLORE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CG_CLASS_LEN 200

/* The class of a program the oracle judges alone: "" when the oracle and
 * finite differences agree, "generator: ..." when the program is invalid
 * (the parser or the oracle refuses it), "tool: oracle vs finite
 * differences" when they disagree. atol (may be NULL) receives the atol
 * its checks need (0 when the oracle did not run): the dtype's rtol times
 * the largest |gradient| of any tensor on any rank, or, where more, 16 unit
 * roundoffs of the dtype times the largest |value| times W(W+1) (gradients
 * that cancel to 0 round at their terms' magnitude, not their own). */
void cg_explore_oracle_class(const char *text, const char *file, char cls[CG_CLASS_LEN], double *atol);

/* The program with a `tolerance` line after its dtype line when its dtype's
 * default atol is below `atol` (cg_explore_oracle_class's): a sum in f32 (or
 * a half) rounds at the magnitude of its terms, not of its result, so a
 * gradient element that cancels to 0.19 from terms of 700 is off by 1e-4
 * in an honest f32 run, past the elementwise 1e-5. The line keeps the
 * dtype's rtol: the error allowed stays far below what a wrong rule (a
 * factor, a lost term) gives. A malloc'd copy of text when nothing is
 * needed; NULL when out of memory. */
char *cg_explore_with_tolerance(const char *text, double atol);

/* A drawn program made ready for the runs: judged by the oracle into cls
 * (cg_explore_oracle_class); an f16 program whose largest |gradient| would
 * come near f16's range has its losses scaled by a power of two (and is
 * judged again); then the tolerance its checks need
 * (cg_explore_with_tolerance). The final text, malloc'd, or NULL when out of
 * memory. */
char *cg_explore_judged(const char *text, const char *file, char cls[CG_CLASS_LEN]);

/* Run the tool (this executable) on `paths` with `extra` options (NULL-
 * terminated), its JSON report into json, its output into log. The child's
 * exit status (0..3), or -1 when it could not be run. */
int cg_explore_run_tool(const char *const *extra, const char *json, const char *log, const char *const *paths,
                        int npaths);

/* The first case of the report at `json` as comment lines into f: "#
 * observed under UNDER (STATUS):", then each param's (x0, x1, ...) observed
 * gradient per rank (16 numbers at most), each error, the case's message.
 * 0, or -1 when unreadable. */
int cg_explore_observed_comment(const char *json, const char *under, FILE *f);

#endif
