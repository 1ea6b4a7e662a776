/* explore_state.h — private to `collgrad-check explore` (explore.h): the
 * run's options and classes, shared by the driver (explore.c) and the
 * shrinking of each class (explore_findings.c). */
#ifndef CG_EXPLORE_STATE_H
#define CG_EXPLORE_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore_gen.h"
#include "explore_class.h"

enum { MAX_CLASSES = 64, MAX_EXTRA = 16 };

typedef struct cls {
    char name[CG_CLASS_LEN];
    int count;
    char first[64];            /* the first program of the class */
    char shrunk[PATH_MAX];     /* its shrunk case file, "" until made */
    int statements;            /* the shrunk program's statements */
} cls;

typedef struct explore {
    uint64_t seed;
    long count;
    double budget;             /* seconds; 0: none */
    cg_gen_opts gen;
    const char *out;
    const char *extra[MAX_EXTRA]; /* the backend under test: --rules X, --transport X, ... */
    int nextra;
    bool mpi;                  /* the MPI reference run (--no-mpi: the oracle alone) */
    const char *rules;         /* --rules of a built-in rule set alone: judged in-process, on threads */
    char timeout[32];          /* each run's job deadline (--timeout): a program that hangs a backend */
    double shrink_time;        /* seconds per class the shrinking may take */
    cls classes[MAX_CLASSES];
    int nclasses;
    long done, rejected, tool_bugs, findings;
    long accepted;             /* programs the oracle took: what the runs take */
    double t0;
} explore;

/* The command line into e, its defaults first, and the backend's options
 * checked as the tool's own command line checks them (explore_opts.c): 0;
 * an exit status; or 100 + CG_EXIT_OK after --help. */
int cgx_parse(explore *e, int argc, char **argv);
/* DIR/programs/NAME.case into path. */
void cgx_program_path(const explore *e, const char *name, char *path, size_t n);
/* text into a new file at path: 0, or -1. */
int cgx_write_text(const char *path, const char *text);
/* The text of a file of at most 64 KiB (a program is a few hundred bytes),
 * malloc'd, or NULL. */
char *cgx_slurp(const char *path);
/* The options a run of the tool gets: --no-fd, the job deadline and, unless
 * reference, the backend under test's; NULL-terminated, into extra. */
void cgx_tool_args(const explore *e, bool reference, const char *extra[MAX_EXTRA + 4]);
/* Each class's first program, shrunk to DIR/shrunk-K.case: 0, or CG_EXIT_INFRA. */
int cgx_shrink_all(explore *e);

#endif
