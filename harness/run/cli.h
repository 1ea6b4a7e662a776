/* cli.h — the command line, one flag set for every mode (like nccl-tests),
 * parsed with getopt_long; collgrad-check.1 is its manual page.
 *
 *   collgrad-check [OPTIONS] [CASE_FILE|DIR]...
 *
 * Exit status, a contract CI relies on: 0 all pass; 1 a check failed; 2 bad
 * usage or a bad case file; 3 an infrastructure error (MPI, a lost rank, I/O). */
#ifndef CG_CLI_H
#define CG_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ir.h"
#include "result.h" /* CG_EXIT_* */

typedef struct cg_options {
    bool oracle_only;
    bool list;
    bool verbose;
    bool no_fd;          /* skip the finite-difference check */
    bool no_diagnosis;   /* judge only: no re-run of the emulations to name a mistake */
    bool check_sync;     /* --check-sync: compare collective fingerprints before each one */
    bool quiet;          /* no progress lines (set by --explain for its own runs) */
    const char *explain; /* --explain CASE: a case name (or file) to explain */
    const char *json;    /* --json FILE */
    const char *junit;   /* --junit FILE */
    const char *rules;   /* --rules NAME: every case under NAME alone (NULL: the default run) */
    const char *transport; /* --transport NAME|PATH.so (default "mpi") */
    const char *device;  /* --device cpu|cuda (NULL: cuda with nccl, else cpu; device.h) */
    double timeout;      /* --timeout SEC: per-job deadline */
    int world;           /* --world N: only this world size (0 = each case's own) */
    const char *include; /* -R REGEX: only cases whose name matches (POSIX ERE) */
    const char *exclude; /* -E REGEX: not the cases whose name matches */
    int repeat;          /* --repeat N: up to N rounds, until one does not pass (default 1) */
    cg_limits limits;    /* --max-case-bytes, --max-elements, --max-case-elements (0: ir.h's defaults) */
    const char *inject;  /* --inject hang:R|exit:R[:CASE] (the tool's own tests) */
    const char *backend; /* --backend pytorch:API: real PyTorch ranks (backend_pytorch.h) */
    const char *torch_backend; /* --torch-backend gloo|nccl|mpi|NAME|MODULE:NAME (default gloo) */
    const char *python;  /* --python PATH: the interpreter of the PyTorch ranks */
    /* set by the launcher for the processes it starts under mpiexec */
    bool worker;
    const char *
        bundle_file; /* --bundle FILE: the launcher's cases and jobs (bundle.h), read by one rank */
    const char *board_file; /* --board FILE: the status board of the launcher's node (board.h) */
    const char
        *launch_host; /* --launch-host NAME: the launcher's host; ranks elsewhere skip its files */
    char usage[512];     /* what was wrong with the command line, when parsing failed */
    int npaths;
    char **paths;        /* case files or directories; none = the built-in cases */
} cg_options;

/* Parse argv. Returns -1 to continue, or an exit status (after --help,
 * --version, or a usage error printed to stderr). */
int cg_parse_options(int argc, char **argv, cg_options *o);
void cg_print_usage(FILE *f);
/* "4096", "64K", "4M", "1G" (1 .. 2^40, suffixes powers of 1024) into
 * *out; 0 or -1. */
int cg_parse_size(const char *s, size_t *out);

#endif
