/* case_files.h — the case files under the paths of a command line: each path
 * is a *.case file or a directory searched recursively; each path's files are
 * sorted, so every run visits the cases in the same order.
 *
 * The walk never blocks and always ends: entries are examined with fstatat
 * before anything is opened, FIFOs, sockets and devices named *.case are
 * skipped with a note, links are followed but every directory and file is
 * taken once by (dev, inode), so a symbolic-link loop is a note, not a hang,
 * and a case reached by two paths runs once.
 *
 * Ownership: the paths found are the cg_case_files' (cg_case_files_free). */
#ifndef CG_CASE_FILES_H
#define CG_CASE_FILES_H

#include <stddef.h>

typedef struct cg_case_files {
    char **paths;
    int n;
} cg_case_files;

/* The files under paths (npaths 0: cg_builtin_cases_dir()). 0;
 * CG_EXIT_USAGE when a path is neither a directory nor a regular file (why
 * written to refusal[len] and printed); CG_EXIT_INFRA on I/O or memory
 * failure. out is set either way. */
int cg_case_files_find(cg_case_files *out, char *const *paths, int npaths, char *refusal, size_t len);
void cg_case_files_free(cg_case_files *f);

#endif
