/* cli.c — option parsing (cli.h) with getopt_long: --opt VALUE and
 * --opt=VALUE both work, short options may be bundled, and options and paths
 * may come in any order. Every error still names the offending argument the
 * same way ("collgrad-check: expected ..., got '...'"), so getopt's own
 * messages are turned off (opterr = 0) and rewritten here. */
#define _GNU_SOURCE /* getopt_long */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_set.h"

void cg_print_usage(FILE *f)
{
    fprintf(f,
            "usage: collgrad-check [OPTIONS] [CASE_FILE|DIR]...\n"
            "       collgrad-check bench|compare|explore|export-ir|matrix ... (each with its own --help)\n"
            "\n"
            "Checks the gradients that flow backward through collectives against a\n"
            "single-process oracle. Without paths it runs the built-in cases, here\n"
            "  %s\n"
            "Options take their value as the next argument or after '=' (--world=2).\n"
            "\n"
            "what runs:\n"
            "  --oracle-only     run only the oracle (all ranks simulated in one process)\n"
            "  --world N         run each case at world size N only (1..64; cases that do\n"
            "                    not list N are skipped)\n"
            "  -R, --include REGEX  only the cases whose name matches REGEX (POSIX ERE)\n"
            "  -E, --exclude REGEX  not the cases whose name matches REGEX\n"
            "  --repeat N        run the selection up to N times, stopping at the first\n"
            "                    round that does not pass (ctest's until-fail)\n"
            "  --rules NAME      run every case under rule set NAME alone and compare it\n"
            "                    with the oracle (reference, c10d, torch-nn@1.13,\n"
            "                    torch-nn@2.4, gatherlayer, diffdist, torch-funcol@2.15,\n"
            "                    torch-funcol@2.4, horovod, torch-xla, megatron, or a\n"
            "                    plugin ./liby.so);\n"
            "                    default: reference plus the emulations the cases' rules=\n"
            "                    name\n"
            "  --transport NAME  mpi (default), nccl (GPU builds) or a plugin ./libx.so\n"
            "  --device DEV      cpu or cuda: where the ranks' tensors live and their local\n"
            "                    ops run (default cuda with --transport nccl, else cpu);\n"
            "                    the oracle always runs on the CPU in f64\n"
            "  --backend pytorch:API  run the cases with real PyTorch ranks instead of MPI:\n"
            "                    API nn, c10d, funcol, gatherlayer, diffdist, rpc or\n"
            "                    listassign\n"
            "  --backend jax:API  run them through real JAX, one process of W host\n"
            "                    devices: API shard_map (check_vma on) or shard_map_novma\n"
            "  --torch-backend NAME  the process group of --backend: gloo (default), nccl,\n"
            "                    mpi, or MODULE:NAME / FILE.py:NAME registering NAME\n"
            "  --python PATH     the interpreter of the PyTorch ranks (default:\n"
            "                    $COLLGRAD_PYTHON, /usr/bin/python3 with torch, python3)\n"
            "                    or of JAX ($COLLGRAD_JAX_PYTHON, /opt/venv-jax/bin/python)\n"
            "checks:\n"
            "  --timeout SEC     per-job deadline, in every mode; a hung or dead rank is\n"
            "                    named, an oracle past it stops (exit 3; default 60)\n"
            "  --check-sync      before each collective, compare every rank's (op, dtype,\n"
            "                    count, root, direction, program call): a desync fails\n"
            "                    there, not hangs\n"
            "  --no-fd           skip the finite-difference check of the oracle\n"
            "  --no-diagnosis    do not name the mistake a wrong case matches (each failing\n"
            "                    case re-runs every emulation; `matrix` needs only verdicts)\n"
            "  --inject SPEC     break the run on purpose (the tool's own self-tests):\n"
            "                    KIND[:RANK[:CASE]] with KIND hang, exit, wrong_sum,\n"
            "                    drop_rank, swap_slices, bit_flip, scale_world, wrong_root\n"
            "                    or wrong_dtype_size; a spec that injects nothing is exit 2\n"
            "limits (a case asking for more is a bad case, exit 2):\n"
            "  --max-case-bytes N  the largest case file read (default 4M)\n"
            "  --max-elements N  the most elements in one tensor (default 16M)\n"
            "  --max-case-elements N  the most elements all of a rank's tensors may have\n"
            "                    together, gradients included (default 128M)\n"
            "                    (N: digits with an optional K, M or G, powers of 1024)\n"
            "output:\n"
            "  --json FILE       write the JSON report (schema collgrad-check/report/1);\n"
            "                    - is stdout (progress then goes to stderr)\n"
            "  --junit FILE      write JUnit XML (the junit-10 XSD); - is stdout\n"
            "  --list            list the selection (cases, world sizes, bad files) and\n"
            "                    the jobs a run would do; run nothing\n"
            "  --explain CASE    a case's name or file: its program, per-root gradients, both semantics\n"
            "                    and which rule sets agree (runs each rule set over MPI)\n"
            "  -v, --verbose     print every check, not only failing ones\n"
            "  -h, --help        this text\n"
            "  --version         the tool's version\n"
            "\n"
            "environment:\n"
            "  COLLGRAD_CASES_DIR  the built-in cases directory (overrides the one above)\n"
            "  CG_MPIEXEC        the mpiexec that starts the ranks (default: mpiexec)\n"
            "  TMPDIR            where the launcher keeps its job files (default /tmp)\n"
            "  COLLGRAD_PYTHON   the interpreter of --backend ranks (see --python)\n"
            "  COLLGRAD_KINDS    Python files of collective kinds from outside the tree, for\n"
            "                    --backend pytorch ranks (docs/architecture.md)\n"
            "\n"
            "exit status: 0 all pass, 1 a check failed, 2 bad usage or case file,\n"
            "3 infrastructure error (MPI, a lost rank, out of memory, a deadline, a signal)\n"
            "See collgrad-check(1).\n",
            cg_builtin_cases_dir());
}

/* Say what is wrong with the command line, and keep it for the report a
 * refused run still writes (main.c). Returns 2. */
static int usage_error(cg_options *o, const char *fmt, const char *arg)
    __attribute__((format(printf, 2, 0)));
static int usage_error(cg_options *o, const char *fmt, const char *arg)
{
    snprintf(o->usage, sizeof o->usage, fmt, arg);
    fprintf(stderr, "collgrad-check: %s\nTry 'collgrad-check --help'.\n", o->usage);
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

static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Long options without a short form, by number. */
enum {
    OPT_ORACLE_ONLY = 256,
    OPT_LIST,
    OPT_CHECK_SYNC,
    OPT_NO_FD,
    OPT_NO_DIAGNOSIS,
    OPT_VERSION,
    OPT_JSON,
    OPT_JUNIT,
    OPT_RULES,
    OPT_TRANSPORT,
    OPT_DEVICE,
    OPT_TIMEOUT,
    OPT_WORLD,
    OPT_INJECT,
    OPT_BACKEND,
    OPT_TORCH_BACKEND,
    OPT_PYTHON,
    OPT_EXPLAIN,
    OPT_REPEAT,
    OPT_MAX_CASE_BYTES,
    OPT_MAX_ELEMENTS,
    OPT_MAX_CASE_ELEMENTS,
    /* internal: the launcher passes these to the ranks it starts */
    OPT_WORKER,
    OPT_BUNDLE,
    OPT_BOARD,
    OPT_LAUNCH_HOST,
};

static const struct option long_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"verbose", no_argument, NULL, 'v'},
    {"include", required_argument, NULL, 'R'},
    {"exclude", required_argument, NULL, 'E'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"oracle-only", no_argument, NULL, OPT_ORACLE_ONLY},
    {"list", no_argument, NULL, OPT_LIST},
    {"check-sync", no_argument, NULL, OPT_CHECK_SYNC},
    {"no-fd", no_argument, NULL, OPT_NO_FD},
    {"no-diagnosis", no_argument, NULL, OPT_NO_DIAGNOSIS},
    {"json", required_argument, NULL, OPT_JSON},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"rules", required_argument, NULL, OPT_RULES},
    {"transport", required_argument, NULL, OPT_TRANSPORT},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"world", required_argument, NULL, OPT_WORLD},
    {"inject", required_argument, NULL, OPT_INJECT},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"torch-backend", required_argument, NULL, OPT_TORCH_BACKEND},
    {"python", required_argument, NULL, OPT_PYTHON},
    {"explain", required_argument, NULL, OPT_EXPLAIN},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"max-case-bytes", required_argument, NULL, OPT_MAX_CASE_BYTES},
    {"max-elements", required_argument, NULL, OPT_MAX_ELEMENTS},
    {"max-case-elements", required_argument, NULL, OPT_MAX_CASE_ELEMENTS},
    {"worker", no_argument, NULL, OPT_WORKER},
    {"bundle", required_argument, NULL, OPT_BUNDLE},
    {"board", required_argument, NULL, OPT_BOARD},
    {"launch-host", required_argument, NULL, OPT_LAUNCH_HOST},
    {NULL, 0, NULL, 0},
};

/* The value of one option into o. -1 to go on, or an exit status. */
static int take_value(cg_options *o, int opt, const char *name, const char *val)
{
    size_t n;
    switch (opt) {
    case 'R': o->include = val; break;
    case 'E': o->exclude = val; break;
    case OPT_JSON: o->json = val; break;
    case OPT_JUNIT: o->junit = val; break;
    case OPT_RULES: o->rules = val; break;
    case OPT_TRANSPORT: o->transport = val; break;
    case OPT_INJECT: o->inject = val; break;
    case OPT_BACKEND: o->backend = val; break;
    case OPT_TORCH_BACKEND: o->torch_backend = val; break;
    case OPT_PYTHON: o->python = val; break;
    case OPT_EXPLAIN: o->explain = val; break;
    case OPT_BUNDLE: o->bundle_file = val; break;
    case OPT_BOARD: o->board_file = val; break;
    case OPT_LAUNCH_HOST: o->launch_host = val; break;
    case OPT_DEVICE:
        if (strcmp(val, "cpu") != 0 && strcmp(val, "cuda") != 0)
            return usage_error(o, "expected cpu or cuda after --device, got '%s'", val);
        o->device = val;
        break;
    case OPT_TIMEOUT: {
        char *end;
        o->timeout = strtod(val, &end);
        if (*val == '\0' || *end || !(o->timeout > 0) || o->timeout > 86400)
            return usage_error(o, "expected seconds in (0, 86400] after --timeout, got '%s'", val);
        break;
    }
    case OPT_WORLD:
        if (parse_int(val, 1, 64, &o->world) != 0)
            return usage_error(o, "expected a world size in 1..64 after --world, got '%s'", val);
        break;
    case OPT_REPEAT:
        if (parse_int(val, 1, 1000000, &o->repeat) != 0)
            return usage_error(o, "expected a count in 1..1000000 after --repeat, got '%s'", val);
        break;
    case OPT_MAX_CASE_BYTES:
        if (cg_parse_size(val, &o->limits.case_bytes) != 0)
            return usage_error(o, "expected a byte count (digits, optionally K, M or G) after --max-case-bytes, "
                               "got '%s'", val);
        break;
    case OPT_MAX_ELEMENTS:
    case OPT_MAX_CASE_ELEMENTS:
        if (cg_parse_size(val, &n) != 0) {
            char fmt[128];
            snprintf(fmt, sizeof fmt, "expected an element count (digits, optionally K, M or G) after --%s, "
                     "got '%%s'", name);
            return usage_error(o, fmt, val);
        }
        *(opt == OPT_MAX_ELEMENTS ? &o->limits.value_elements : &o->limits.case_elements) = (int64_t)n;
        break;
    default: break;
    }
    return -1;
}

/* The long name of option number opt, for messages. */
static const char *name_of(int opt)
{
    for (const struct option *l = long_options; l->name; l++)
        if (l->val == opt)
            return l->name;
    return "?";
}

int cg_parse_options(int argc, char **argv, cg_options *o)
{
    memset(o, 0, sizeof *o);
    o->transport = "mpi";
    o->timeout = 60.0;
    o->repeat = 1;
    o->paths = calloc((size_t)argc + 1, sizeof *o->paths);
    if (!o->paths) {
        fprintf(stderr, "collgrad-check: out of memory\n");
        return CG_EXIT_INFRA;
    }
    opterr = 0; /* our messages, not getopt's */
    optind = 1; /* parse from the start, also when called twice (the tests) */
    for (;;) {
        int at = optind, opt = getopt_long(argc, argv, ":hvR:E:", long_options, NULL);
        if (opt == -1)
            break;
        const char *arg = at < argc ? argv[at] : "";
        int rc = -1;
        switch (opt) {
        case 'h': cg_print_usage(stdout); return CG_EXIT_OK;
        case OPT_VERSION: printf("collgrad-check %s\n", CG_VERSION); return CG_EXIT_OK;
        case 'v': o->verbose = true; break;
        case OPT_ORACLE_ONLY: o->oracle_only = true; break;
        case OPT_LIST: o->list = true; break;
        case OPT_CHECK_SYNC: o->check_sync = true; break;
        case OPT_NO_FD: o->no_fd = true; break;
        case OPT_NO_DIAGNOSIS: o->no_diagnosis = true; break;
        case OPT_WORKER: o->worker = true; break;
        case ':': /* a value is missing: name the option as it was written */
            return usage_error(o, "expected a value after %s", optopt ? (optopt < 256 ? (char[]){'-', (char)optopt, 0}
                                                                              : arg)
                                                                   : arg);
        case '?': /* an unknown option, or a value given to one that takes none */
            if (strchr(arg, '=') && strncmp(arg, "--", 2) == 0)
                return usage_error(o, "expected no value after an option that takes none, got '%s'", arg);
            return usage_error(o, "expected an option (see --help), got '%s'", optopt && optopt < 256 && arg[1] != '-'
                                                                                  ? (char[]){'-', (char)optopt, 0}
                                                                                  : arg);
        default: rc = take_value(o, opt, name_of(opt), optarg); break;
        }
        if (rc >= 0)
            return rc;
    }
    for (int i = optind; i < argc; i++)
        o->paths[o->npaths++] = argv[i];
    return -1;
}
