/* preflight.c — names and selection checked before a launch (preflight.h). */
#include "preflight.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "board.h"
#include "plugin.h"
#include "rules.h"
#include "runner.h"
#include "transport_fault.h"

/* The transports this build knows by name; anything else is a plugin path. */
static const char *const builtin_transports[] = {"mpi", "nccl"};

static int readable_plugin(const char *what, const char *path, char *err, size_t errlen)
{
    if (access(path, R_OK) == 0)
        return 0;
    snprintf(err, errlen, "%s %s: cannot read the plugin: %s", what, path, strerror(errno));
    return CG_EXIT_USAGE;
}

static int check_transport(const char *name, char *err, size_t errlen)
{
    if (cg_is_plugin_path(name))
        return readable_plugin("--transport", name, err, errlen);
    for (size_t i = 0; i < sizeof builtin_transports / sizeof *builtin_transports; i++)
        if (strcmp(name, builtin_transports[i]) == 0)
            return 0;
    snprintf(err, errlen, "--transport %s: unknown transport; expected mpi, nccl or a plugin path "
             "(a name with '/' or ending in .so)", name);
    return CG_EXIT_USAGE;
}

/* A built-in name, or a plugin loaded and ABI-checked here, in the process
 * that launches: the user named it on the command line (a case file cannot:
 * parse_expect.c). The message is the loader's own (rules.c). */
static int check_rules(const char *name, char *err, size_t errlen)
{
    if (cg_is_plugin_path(name) && readable_plugin("--rules", name, err, errlen) != 0)
        return CG_EXIT_USAGE;
    cg_status st = CG_STATUS_OK;
    if (cg_rules_load(name, &st))
        return 0;
    snprintf(err, errlen, "%s", st.msg);
    return CG_EXIT_USAGE;
}

/* A data fault (transport_fault.h) or a process fault (board.h). */
static int check_inject(const char *spec, char *err, size_t errlen)
{
    cg_fault f;
    int kind = cg_fault_parse(spec, &f, err, errlen);
    if (kind == 0)
        return 0;
    if (kind > 0 && cg_board_inject(spec, err, errlen) == 0)
        return 0;
    if (kind > 0) { /* neither table knows it: the data faults' message names every kind */
        cg_fault_parse("?", &f, err, errlen);
        char *got = strstr(err, "got '?'");
        if (got)
            snprintf(got, errlen - (size_t)(got - err), "got '%s'", spec);
    }
    return CG_EXIT_USAGE;
}

int cg_preflight_names(const cg_options *o, char *err, size_t errlen)
{
    int rc = 0;
    if (!o->oracle_only && !o->backend && o->transport)
        rc = check_transport(o->transport, err, errlen);
    if (rc == 0 && !o->backend && o->rules)
        rc = check_rules(o->rules, err, errlen);
    if (rc == 0 && o->inject)
        rc = check_inject(o->inject, err, errlen);
    return rc;
}

int cg_preflight_selection(const cg_options *o, const cg_case_set *set, int world, char *err, size_t errlen)
{
    cg_options sel = *o;
    if (world > 0)
        sel.world = world;
    bool offered[CG_MAX_WORLD + 1] = {false};
    for (int i = 0; i < set->n; i++) {
        int worlds[CG_MAX_WORLD];
        if (cg_case_worlds(&sel, set->cases[i], worlds) > 0)
            return 0;
        cg_options any = *o;
        any.world = 0;
        int n = cg_case_worlds(&any, set->cases[i], worlds);
        for (int k = 0; k < n; k++)
            if (worlds[k] >= 1 && worlds[k] <= CG_MAX_WORLD)
                offered[worlds[k]] = true;
    }
    if (set->n == 0 && set->nbad > 0)
        return 0;
    size_t at = (size_t)snprintf(err, errlen, "no case runs at world size %d (%s); the %d case%s offer%s:",
                                 sel.world, world > 0 && o->world == 0 ? "the MPI world" : "--world", set->n,
                                 set->n == 1 ? "" : "s", set->n == 1 ? "s" : "");
    for (int w = 1; w <= CG_MAX_WORLD && at < errlen; w++)
        if (offered[w])
            at += (size_t)snprintf(err + at, errlen - at, " %d", w);
    return CG_EXIT_USAGE;
}
