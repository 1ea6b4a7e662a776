/* compare.h — `collgrad-check compare OLD.json NEW.json`: what changed
 * between two JSON reports (two backends, two versions, two rule sets).
 *
 * Cases match by (name, world, rules) and checks by (tensor, rank, semantics,
 * rules, against), where a case's rules equal to its report's run-wide rule
 * set, and a check's rules equal to its case's, count as "the run's own": so
 * a `--rules reference` report lines up with a `--rules torch-nn` one.
 *
 * One line per change on stdout, then "N regressions, N fixes, N changes".
 * A regression is whatever makes NEW check less or fail more than OLD:
 *   - a case or check going from pass or skip to fail or error, or from fail
 *     to error;
 *   - a case or check going from pass or fail to skip (no longer checked);
 *   - a case or check present in OLD and missing from NEW, unless OLD had
 *     skipped it.
 * A fix goes from fail or error to pass; everything else is a change (error
 * to fail, skip to pass, a case or check only in NEW, a passing value that
 * moved). */
#ifndef CG_COMPARE_H
#define CG_COMPARE_H

/* argv[0] is "compare". Returns the exit status: 0 no regression, 1 at least
 * one, 2 bad usage or a file that is not a readable report. */
int cg_compare_main(int argc, char **argv);

#endif
