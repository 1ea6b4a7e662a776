/* explore_opts.c — the command line of `collgrad-check explore`
 * (explore_state.h: cgx_parse). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_pytorch.h"
#include "cli.h"
#include "explore_state.h"
#include "preflight.h"

static int usage(const char *msg, const char *arg)
{
    if (msg) {
        fprintf(stderr, "collgrad-check explore: ");
        fprintf(stderr, msg, arg);
        fputc('\n', stderr);
    }
    fprintf(msg ? stderr : stdout,
            "usage: collgrad-check explore [--seed S] [--count N] [--time-budget SEC] [--max-world W]\n"
            "                              [--halves] [--no-mpi] [--out DIR]\n"
            "                              [--rules NAME | --transport NAME | --backend pytorch:API [--python PATH]]\n"
            "                              [--inject SPEC]\n"
            "Random programs (valid by construction, the same for a seed everywhere) through the oracle,\n"
            "finite differences and the MPI reference, which must agree (else a bug of the tool), then\n"
            "through the backend under test; each disagreement class is shrunk to a case file in DIR\n"
            "(default explore-out), with DIR/explore.json and DIR/explore.xml.\n"
            "  --seed S          the programs' seed (default 1)\n"
            "  --count N         programs (default 100)\n"
            "  --time-budget SEC stop drawing programs after SEC seconds\n"
            "  --max-world W     worlds 1..W (default 8, at most 8)\n"
            "  --halves          bf16 and f16 programs too\n"
            "  --no-mpi          the oracle and finite differences only\n"
            "  --timeout SEC     each run's job deadline: a program that hangs the backend (default 20)\n"
            "  --shrink-time SEC the most time shrinking one class may take (default 120)\n"
            "  --python PATH, --torch-backend NAME  for --backend pytorch:API, as the tool's own\n"
            "                    (the ranks' interpreter; gloo or nccl)\n");
    return msg ? CG_EXIT_USAGE : CG_EXIT_OK;
}

/* optarg, the value of option `opt`, as an integer in lo..hi into *v: 0,
 * or usage()'s exit status naming the option and its range. */
static int number(const char *opt, long lo, long hi, long *v)
{
    char *end, msg[160];
    errno = 0;
    *v = strtol(optarg, &end, 10);
    if (*optarg && !*end && !errno && *v >= lo && *v <= hi)
        return 0;
    snprintf(msg, sizeof msg, "%s: expected an integer in %ld..%ld, got '%s'", opt, lo, hi, optarg);
    return usage("%s", msg);
}

static int parse(explore *e, int argc, char **argv)
{
    enum { O_SEED = 256, O_COUNT, O_BUDGET, O_MAXW, O_HALVES, O_NOMPI, O_OUT, O_TIMEOUT, O_SHRINK, O_RULES,
           O_TRANSPORT, O_BACKEND, O_INJECT, O_PYTHON, O_TORCH_BACKEND };
    static const struct option longs[] = {
        {"seed", required_argument, NULL, O_SEED},     {"count", required_argument, NULL, O_COUNT},
        {"time-budget", required_argument, NULL, O_BUDGET}, {"max-world", required_argument, NULL, O_MAXW},
        {"halves", no_argument, NULL, O_HALVES},       {"no-mpi", no_argument, NULL, O_NOMPI},
        {"out", required_argument, NULL, O_OUT},       {"rules", required_argument, NULL, O_RULES},
        {"transport", required_argument, NULL, O_TRANSPORT}, {"backend", required_argument, NULL, O_BACKEND},
        {"inject", required_argument, NULL, O_INJECT}, {"help", no_argument, NULL, 'h'},
        {"timeout", required_argument, NULL, O_TIMEOUT}, {"shrink-time", required_argument, NULL, O_SHRINK},
        {"python", required_argument, NULL, O_PYTHON}, {"torch-backend", required_argument, NULL, O_TORCH_BACKEND},
        {NULL, 0, NULL, 0}};
    static const char *const flags[] = {[O_RULES - O_RULES] = "--rules", [O_TRANSPORT - O_RULES] = "--transport",
                                        [O_BACKEND - O_RULES] = "--backend", [O_INJECT - O_RULES] = "--inject",
                                        [O_PYTHON - O_RULES] = "--python",
                                        [O_TORCH_BACKEND - O_RULES] = "--torch-backend"};
    int c;
    long v = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case O_SEED: if (number("--seed", 0, LONG_MAX, &v)) return CG_EXIT_USAGE;
            e->seed = (uint64_t)v; break;
        case O_COUNT: if (number("--count", 1, 100000000, &v)) return CG_EXIT_USAGE;
            e->count = v; break;
        case O_BUDGET: if (number("--time-budget", 1, 86400 * 7, &v)) return CG_EXIT_USAGE;
            e->budget = (double)v; break;
        case O_MAXW: if (number("--max-world", 1, 8, &v)) return CG_EXIT_USAGE;
            e->gen.max_world = (int)v; break;
        case O_HALVES: e->gen.halves = true; break;
        case O_NOMPI: e->mpi = false; break;
        case O_OUT: /* room left in every PATH_MAX buffer for "/programs/p123456.case" */
            if (!optarg[0] || strlen(optarg) > PATH_MAX - 64)
                return usage("expected a directory name (at most PATH_MAX - 64 bytes) after --out, got '%s'",
                             optarg);
            e->out = optarg;
            break;
        case O_TIMEOUT: if (number("--timeout", 1, 86400, &v)) return CG_EXIT_USAGE;
            snprintf(e->timeout, sizeof e->timeout, "%ld", v); break;
        case O_SHRINK: if (number("--shrink-time", 0, 86400, &v)) return CG_EXIT_USAGE;
            e->shrink_time = (double)v; break;
        case O_RULES: case O_TRANSPORT: case O_BACKEND: case O_INJECT: case O_PYTHON: case O_TORCH_BACKEND:
            if (e->nextra + 2 >= MAX_EXTRA)
                return usage("too many options for the backend, at %s", optarg);
            e->extra[e->nextra++] = flags[c - O_RULES];
            e->extra[e->nextra++] = optarg;
            break;
        case 'h': return usage(NULL, NULL) + 100;
        case ':': return usage("expected a value after %s", argv[optind - 1]);
        default: return usage("expected an explore option, got '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage("expected options only, got '%s'", argv[optind]);
    return 0;
}

/* The backend's options (--rules, --transport, --backend, --inject,
 * --python, --torch-backend) read
 * and checked as the tool's own command line reads them, before a program
 * is drawn: a name that does not exist, or options that do not go together,
 * cost one line (exit 2), not the oracle's and the MPI reference's runs. */
static int check_backend_options(const explore *e)
{
    char *argv[MAX_EXTRA + 2] = {"collgrad-check"};
    for (int i = 0; i < e->nextra; i++)
        argv[i + 1] = (char *)e->extra[i];
    cg_options o;
    int rc = cg_parse_options(e->nextra + 1, argv, &o); /* prints its own refusal */
    if (rc < 0 && (rc = cg_pytorch_check_options(&o)) == 0) {
        cg_status st = CG_STATUS_OK;
        if ((rc = cg_preflight_names(&o, &st)) == 0 && o.backend && strncmp(o.backend, "pytorch:", 8) == 0)
            rc = cg_pytorch_preflight(&o, &st); /* an interpreter without torch: exit 3, as the tool's */
        if (rc != 0)
            fprintf(stderr, "collgrad-check explore: %s\n", st.msg);
    }
    free(o.paths);
    return rc;
}

int cgx_parse(explore *e, int argc, char **argv)
{
    e->seed = 1;
    e->count = 100;
    e->gen.max_world = 8;
    e->out = "explore-out";
    e->mpi = true;
    snprintf(e->timeout, sizeof e->timeout, "20");
    e->shrink_time = 120;
    int rc = parse(e, argc, argv);
    if (rc == 0 && e->nextra)
        rc = check_backend_options(e);
    return rc;
}
