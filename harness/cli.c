/* cli.c — option parsing (cli.h). Hand-rolled rather than getopt_long so that
 * every error names the offending argument the same way. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cg_print_usage(FILE *f)
{
    fprintf(f,
            "usage: collgrad-check [OPTIONS] [CASE_FILE|DIR]...\n"
            "\n"
            "Checks the gradients that flow backward through collectives against a\n"
            "single-process oracle. Without paths it runs the built-in cases (%s).\n"
            "\n"
            "options:\n"
            "  --oracle-only     run only the oracle (all ranks simulated in one process)\n"
            "  --world N         run each case at world size N only (cases that do not\n"
            "                    list N are skipped)\n"
            "  --rules NAME      run every case under rule set NAME alone and compare it\n"
            "                    with the oracle (reference, c10d, torch-nn, gatherlayer,\n"
            "                    diffdist, torch-funcol, horovod, torch-xla, megatron, or a\n"
            "                    plugin ./liby.so); default: reference plus the emulations\n"
            "                    the cases' rules= expectations name\n"
            "  --transport NAME  mpi (default), nccl (GPU builds) or a plugin ./libx.so\n"
            "  --device DEV      cpu or cuda: where the ranks' tensors live and their local\n"
            "                    ops run (default cuda with --transport nccl, else cpu);\n"
            "                    the oracle always runs on the CPU in f64\n"
            "  --timeout SEC     per-job deadline; a hung or dead rank is reported (default 60)\n"
            "  --backend pytorch:API  run the cases with real PyTorch ranks instead of MPI:\n"
            "                    API nn, c10d, funcol or gatherlayer\n"
            "  --torch-backend NAME  the process group of --backend: gloo (default), nccl,\n"
            "                    mpi, or MODULE:NAME / FILE.py:NAME registering NAME\n"
            "  --python PATH     the interpreter of the PyTorch ranks (default:\n"
            "                    $COLLGRAD_PYTHON, /usr/bin/python3 with torch, python3)\n"
            "  --junit FILE      write JUnit XML\n"
            "  --check-sync      before each collective, compare every rank's (op, dtype,\n"
            "                    count, root, direction): a desync fails there, not hangs\n"
            "  --explain CASE    print a case's program, per-root gradients, both semantics\n"
            "                    and which rule sets agree (runs each rule set over MPI)\n"
            "  --json FILE       write the JSON report (schema collgrad-check/report/1)\n"
            "  --no-fd           skip the finite-difference check of the oracle\n"
            "  --max-case-bytes N  the largest case file read, in bytes or with a K, M or G\n"
            "                    suffix (default 4M); a larger one is a bad case file\n"
            "  --max-elements N  the most elements one tensor of a case may have (default\n"
            "                    16M); a case asking for more is a bad case (exit 2)\n"
            "  --max-case-elements N  the most elements all of a rank's tensors may have\n"
            "                    together, gradients included (default 128M)\n"
            "  --list            list the cases and their world sizes, run nothing\n"
            "  --verbose         print every check, not only failing ones\n"
            "  --help            this text\n"
            "  --version         the tool's version\n"
            "\n"
            "exit status: 0 all pass, 1 a check failed, 2 bad usage or case file,\n"
            "3 infrastructure error\n",
            CG_CASES_DIR);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "collgrad-check: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'collgrad-check --help'.\n");
    return CG_EXIT_USAGE;
}

int cg_parse_size(const char *s, size_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift)
        end++;
    if (*end != '\0' || v == 0 || v > (1ULL << 40) >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static int parse_world(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1 || v > 64)
        return -1;
    *out = (int)v;
    return 0;
}

int cg_parse_options(int argc, char **argv, cg_options *o)
{
    memset(o, 0, sizeof *o);
    o->transport = "mpi";
    o->timeout = 60.0;
    o->paths = calloc((size_t)argc + 1, sizeof *o->paths);
    if (!o->paths) {
        fprintf(stderr, "collgrad-check: out of memory\n");
        return CG_EXIT_INFRA;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        static const char *const valued[] = {"--json", "--world", "--junit", "--rules", "--transport",
                                             "--timeout", "--inject", "--jobs", "--board", "--results", "--case-list",
                                             "--explain", "--device", "--backend", "--torch-backend",
                                             "--python", "--max-case-bytes", "--max-elements",
                                             "--max-case-elements"};
        bool takes_value = false;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
            takes_value |= strcmp(a, valued[k]) == 0;
        if (takes_value) {
            if (i + 1 >= argc)
                return usage_error("expected a value after %s", a);
            val = argv[++i];
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            cg_print_usage(stdout);
            return CG_EXIT_OK;
        } else if (strcmp(a, "--version") == 0) {
            printf("collgrad-check %s\n", CG_VERSION);
            return CG_EXIT_OK;
        } else if (strcmp(a, "--oracle-only") == 0) {
            o->oracle_only = true;
        } else if (strcmp(a, "--list") == 0) {
            o->list = true;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            o->verbose = true;
        } else if (strcmp(a, "--check-sync") == 0) {
            o->check_sync = true;
        } else if (strcmp(a, "--no-fd") == 0) {
            o->no_fd = true;
        } else if (strcmp(a, "--json") == 0) {
            o->json = val;
        } else if (strcmp(a, "--explain") == 0) {
            o->explain = val;
        } else if (strcmp(a, "--junit") == 0) {
            o->junit = val;
        } else if (strcmp(a, "--rules") == 0) {
            o->rules = val;
        } else if (strcmp(a, "--transport") == 0) {
            o->transport = val;
        } else if (strcmp(a, "--device") == 0) {
            if (strcmp(val, "cpu") != 0 && strcmp(val, "cuda") != 0)
                return usage_error("expected cpu or cuda after --device, got '%s'", val);
            o->device = val;
        } else if (strcmp(a, "--inject") == 0) {
            o->inject = val;
        } else if (strcmp(a, "--backend") == 0) {
            o->backend = val;
        } else if (strcmp(a, "--torch-backend") == 0) {
            o->torch_backend = val;
        } else if (strcmp(a, "--python") == 0) {
            o->python = val;
        } else if (strcmp(a, "--jobs") == 0) {
            o->jobs_file = val;
        } else if (strcmp(a, "--case-list") == 0) {
            o->case_list = val;
        } else if (strcmp(a, "--board") == 0) {
            o->board_file = val;
        } else if (strcmp(a, "--results") == 0) {
            o->results_file = val;
        } else if (strcmp(a, "--worker") == 0) {
            o->worker = true;
        } else if (strcmp(a, "--timeout") == 0) {
            char *end;
            o->timeout = strtod(val, &end);
            if (*end || !(o->timeout > 0) || o->timeout > 86400)
                return usage_error("expected seconds in (0, 86400] after --timeout, got '%s'", val);
        } else if (strcmp(a, "--max-case-bytes") == 0) {
            if (cg_parse_size(val, &o->limits.case_bytes) != 0)
                return usage_error("expected a byte count (digits, optionally K, M or G) after --max-case-bytes, "
                                   "got '%s'", val);
        } else if (strcmp(a, "--max-elements") == 0 || strcmp(a, "--max-case-elements") == 0) {
            size_t n;
            if (cg_parse_size(val, &n) != 0) {
                fprintf(stderr, "collgrad-check: expected an element count (digits, optionally K, M or G) "
                        "after %s, got '%s'\nTry 'collgrad-check --help'.\n", a, val);
                return CG_EXIT_USAGE;
            }
            *(strcmp(a, "--max-elements") == 0 ? &o->limits.value_elements : &o->limits.case_elements) = (int64_t)n;
        } else if (strcmp(a, "--world") == 0) {
            if (parse_world(val, &o->world) != 0)
                return usage_error("expected a world size in 1..64 after --world, got '%s'", val);
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("expected an option (see --help), got '%s'", a);
        } else {
            o->paths[o->npaths++] = argv[i];
        }
    }
    return -1;
}
