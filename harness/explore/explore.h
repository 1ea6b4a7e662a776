/* explore.h — `collgrad-check explore`: random programs through the oracle,
 * finite differences, the MPI reference and the backend under test
 * (design.md section 15).
 *
 *   1. each program (explore_gen.h) is parsed by the tool's parser and run
 *      by the oracle with finite differences, judged in-process
 *      (reports/judge.h): a program the parser or the oracle rejects is a
 *      bug of the generator; analytic and finite-difference gradients that
 *      differ are a bug of the tool;
 *   2. the programs that pass run distributed under the reference rules over
 *      MPI, one job per world (the tool itself, on the folder of programs):
 *      a case that fails there is a bug of the tool (the three opinions must
 *      agree);
 *   3. with --rules, --transport, --backend or --inject, the same programs
 *      run under it: each failing case is a disagreement, classed by the
 *      diagnosis (the known mistake it matches, or "unknown");
 *   4. the first program of each class is shrunk (explore_shrink.h) to a
 *      case file in --out that fails the same way.
 * Writes DIR/explore.json and DIR/explore.xml (one test per class). Exit 0
 * when nothing disagrees, 1 when something does, 2 for bad options, 3 when
 * the runs could not be made. */
#ifndef CG_EXPLORE_H
#define CG_EXPLORE_H

int cg_explore_main(int argc, char **argv);

#endif
