/* matrix_opts.h — the command line of `collgrad-check matrix` (matrix_run.h):
 * the columns (rule sets and pytorch:API backends), what every column's run
 * gets, where the table goes, the cases. */
#ifndef CG_MATRIX_OPTS_H
#define CG_MATRIX_OPTS_H

enum { MAX_COLUMNS = 64 };

typedef struct cg_matrix_opts {
    const char *backends[MAX_COLUMNS];
    int nbackends;
    const char *python, *world, *timeout, *md, *html, *json, *reports;
    char **cases;
    int ncases;
} cg_matrix_opts;

/* argv into o (its strings borrowed from argv): 0; 1 after --help (printed);
 * CG_EXIT_USAGE after printing why not. */
int cg_matrix_parse(int argc, char **argv, cg_matrix_opts *o);

/* "collgrad-check matrix: " fmt (with arg) and a hint on stderr; CG_EXIT_USAGE. */
int cg_matrix_bad_usage(const char *fmt, const char *arg);

#endif
