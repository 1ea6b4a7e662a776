/* case_set.h — the cases a run is about: the case files under its paths
 * (found by case_files.h: each path a *.case file or a directory searched
 * recursively, in path order, each file once), loaded, their rule-set names
 * checked, filtered by name. */
#ifndef CG_CASE_SET_H
#define CG_CASE_SET_H

#include "ir.h"

/* A case file that did not load: the run reports it as an errored test. */
typedef struct cg_case_load_error {
    char *file;
    char *message;       /* "file:line:col: expected ..." */
} cg_case_load_error;

typedef struct cg_case_set {
    int n, cap;
    cg_case **cases;
    int nbad;
    cg_case_load_error *bad; /* in path order, like cases */
    char refusal[CG_ERR_LEN]; /* why the whole selection failed (a path that cannot be read), or "" */
} cg_case_set;

/* Load every case under paths (npaths 0: the built-in cases directory).
 * A path on the command line that is neither a directory nor a regular file
 * is exit 2. Each file is read through cg_load_case under lim (NULL: the defaults).
 * Returns 0; 2 after printing each bad file's "file:line:col: expected ..."
 * to stderr and keeping it in set->bad (the good ones stay loaded, so a run
 * can go on and report both); 3 on I/O or memory failure. */
int cg_case_set_load(cg_case_set *set, char *const *paths, int npaths, const cg_limits *lim);
/* Keep only the cases (and bad files, by their base name less ".case")
 * whose name matches the POSIX extended regex include (NULL: all) and not
 * exclude (NULL: none), in order. 0; 2 with st for a bad expression, or
 * when nothing is left ("-R 'x' matches no case; the N cases are: ..."). */
int cg_case_set_filter(cg_case_set *set, const char *include, const char *exclude, cg_status *st);
/* Every case's rules=NAME must name a registered rule set: a built-in one,
 * or plugin_name, the table name of the --rules plugin (NULL: none). A case
 * naming another is moved to set->bad with "file:line:col: expected a
 * registered rule set (...), got 'NAME'" (printed to stderr), as a parse
 * error would be. 0; 2 when any moved; 3 out of memory. */
int cg_case_set_check_rules(cg_case_set *set, const char *plugin_name);
void cg_case_set_free(cg_case_set *set);
/* The directory a run without paths searches, first found:
 * $COLLGRAD_CASES_DIR, the cases installed beside this executable
 * (bin/../share/collgrad-check/cases), the source tree's (a build-tree
 * binary), else the configured install directory (named in errors). */
const char *cg_builtin_cases_dir(void);

#endif
