/* compare.h — `collgrad-check compare OLD.json NEW.json`: what changed
 * between two JSON reports (two backends, two versions, two rule sets).
 *
 * Cases match by (name, world, rules) and checks by (tensor, rank, semantics,
 * rules, against), where a case's rules equal to its report's run-wide rule
 * set, and a check's rules equal to its case's, count as "the run's own": so
 * a `--rules reference` report lines up with a `--rules torch-nn` one.
 *
 * One line per change on stdout, then "N regressions, N fixes, N changes".
 * A regression is a case or check going from pass to fail or error, or a
 * case that passed in OLD and is missing from NEW; a fix goes the other way
 * (fail or error to pass); everything else is a change. */
#ifndef CG_COMPARE_H
#define CG_COMPARE_H

/* argv[0] is "compare". Returns the exit status: 0 no regression, 1 at least
 * one, 2 bad usage or a file that is not a readable report. */
int cg_compare_main(int argc, char **argv);

#endif
