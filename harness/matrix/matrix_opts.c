/* matrix_opts.c — the command line of `collgrad-check matrix` (matrix_opts.h). */
#include "matrix_opts.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_pytorch.h"
#include "cli.h"
#include "rules.h"


static const char *const usage_text =
    "usage: collgrad-check matrix [--backends LIST] [--python PATH] [--world N] [--timeout SEC]\n"
    "                             [--reports DIR] [--md FILE] [--html FILE] [--json FILE]\n"
    "                             [CASE|DIR ...]\n"
    "Run the cases (default: every built-in case) through each backend and write one table of\n"
    "case x backend: correct / wrong (largest error) / refused (message) / hangs / skipped (why).\n"
    "  --backends LIST  comma-separated rule sets (reference, torch-nn@2.4, ...), pytorch:API\n"
    "                   (nn, c10d, funcol, gatherlayer, diffdist, rpc, listassign) and jax:API\n"
    "                   (shard_map, shard_map_novma); default: every built-in rule set, then\n"
    "                   every PyTorch API, then both JAX columns\n"
    "  --python PATH    the interpreter of the PyTorch columns (as for --backend; the JAX\n"
    "                   columns take $COLLGRAD_JAX_PYTHON or /opt/venv-jax/bin/python)\n"
    "  --world N, --timeout SEC  passed to every column's run\n"
    "  --reports DIR    keep each column's JSON report there, as DIR/BACKEND.json\n"
    "  --md FILE, --html FILE, --json FILE  where the table goes ('-': standard output);\n"
    "                   without any of them, Markdown on standard output. The HTML page is\n"
    "                   self-contained; hover over a cell for its message and differing numbers\n"
    "A column whose run skipped every case, or wrote no report, is left out and said so.\n";

int cg_matrix_bad_usage(const char *fmt, const char *arg)
{
    fputs("collgrad-check matrix: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'collgrad-check matrix --help'.\n", stderr);
    return CG_EXIT_USAGE;
}

/* A backend by its full name ("torch-nn" is torch-nn@1.13, as a run reports it), NULL if unknown. */
static const char *backend_name(const char *b)
{
    if (strncmp(b, "pytorch:", 8) == 0)
        return cg_pytorch_api_known(b + 8) ? b : NULL;
    if (cg_backend_is_jax(b)) {
        for (int i = 0; cg_jax_api(i); i++)
            if (strcmp(b + 4, cg_jax_api(i)) == 0)
                return b;
        return NULL;
    }
    const cg_rules *r = cg_rules_find(b);
    return r ? r->name : NULL;
}

static int split_backends(cg_matrix_opts *o, char *list)
{
    o->nbackends = 0;
    for (char *save = NULL, *b = strtok_r(list, ",", &save); b; b = strtok_r(NULL, ",", &save)) {
        const char *name = backend_name(b);
        if (!name)
            return cg_matrix_bad_usage(
                "unknown backend '%s' (expected a built-in rule set, e.g. reference or "
                "torch-nn@2.4, pytorch:API with API nn, c10d, funcol, gatherlayer, "
                "diffdist, rpc or listassign, or jax:shard_map or jax:shard_map_novma)",
                b);
        bool again = false; /* "torch-nn,torch-nn@1.13": one column */
        for (int k = 0; k < o->nbackends; k++)
            again |= strcmp(o->backends[k], name) == 0;
        if (again)
            continue;
        if (o->nbackends == MAX_COLUMNS)
            return cg_matrix_bad_usage("more than 64 backends in '%s'", b);
        o->backends[o->nbackends++] = name;
    }
    return o->nbackends ? 0 : cg_matrix_bad_usage("expected a backend in --backends, got '%s'", "");
}

static void default_backends(cg_matrix_opts *o)
{
    const cg_rules *const *all = cg_rules_all();
    static char names[MAX_COLUMNS][32];
    int k = 0;
    for (int i = 0; all[i] && o->nbackends < MAX_COLUMNS; i++)
        o->backends[o->nbackends++] = all[i]->name;
    for (int i = 0; cg_pytorch_api(i) && o->nbackends < MAX_COLUMNS; i++, k++) {
        snprintf(names[k], sizeof names[k], "pytorch:%s", cg_pytorch_api(i));
        o->backends[o->nbackends++] = names[k];
    }
    for (int i = 0; cg_jax_api(i) && o->nbackends < MAX_COLUMNS; i++, k++) {
        snprintf(names[k], sizeof names[k], "jax:%s", cg_jax_api(i));
        o->backends[o->nbackends++] = names[k];
    }
}

/* --world and --timeout read as every column's run will read them: a bad
 * value is one line now (the tool's own message), not a table whose every
 * cell is that refusal. */
static bool passed_options_ok(const cg_matrix_opts *o)
{
    if (!o->world && !o->timeout)
        return true;
    char *args[5] = {"collgrad-check"};
    int n = 1;
    if (o->world) {
        args[n++] = "--world";
        args[n++] = (char *)o->world;
    }
    if (o->timeout) {
        args[n++] = "--timeout";
        args[n++] = (char *)o->timeout;
    }
    cg_options co;
    int rc = cg_parse_options(n, args, &co); /* -1: read; else it printed why not */
    free(co.paths);
    return rc < 0;
}

int cg_matrix_parse(int argc, char **argv, cg_matrix_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **value = strcmp(a, "--python") == 0    ? &o->python
                             : strcmp(a, "--world") == 0   ? &o->world
                             : strcmp(a, "--timeout") == 0 ? &o->timeout
                             : strcmp(a, "--md") == 0      ? &o->md
                             : strcmp(a, "--html") == 0    ? &o->html
                             : strcmp(a, "--json") == 0    ? &o->json
                             : strcmp(a, "--reports") == 0 ? &o->reports
                                                           : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return 1;
        }
        if (value || strcmp(a, "--backends") == 0) {
            if (i + 1 >= argc)
                return cg_matrix_bad_usage("%s needs a value", a);
            if (value)
                *value = argv[++i];
            else if (split_backends(o, argv[++i]) != 0)
                return CG_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return cg_matrix_bad_usage("unknown option '%s'", a);
        } else {
            o->cases = &argv[i];
            o->ncases = argc - i;
            for (int k = i; k < argc; k++)
                if (argv[k][0] == '-' && argv[k][1])
                    return cg_matrix_bad_usage("options come before the cases, got '%s' after them", argv[k]);
            break;
        }
    }
    if (!o->nbackends)
        default_backends(o);
    return passed_options_ok(o) ? 0 : 2;
}

