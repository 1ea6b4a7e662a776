/* matrix_run.h — `collgrad-check matrix [OPTIONS] [CASES]`: the selected
 * cases through every backend named (default: every built-in rule set and
 * every real-PyTorch API), one run of this executable each, and the table
 * of case x backend they make (reports/matrix.h) as Markdown, HTML and
 * JSON. A column whose run skipped every case (funcol under torch 1.x) or
 * wrote no report is left out, with the reason printed under the table.
 * Exit: 0 the table was written (whatever its cells say), 2 a bad command
 * line, 3 no column could be run or an output could not be written. */
#ifndef CG_MATRIX_RUN_H
#define CG_MATRIX_RUN_H

int cg_matrix_main(int argc, char **argv);

#endif
