/* preflight.c — names and selection checked before a launch (preflight.h). */
#include "preflight.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "process_fault.h"
#include "plugin.h"
#include "rules.h"
#include "runner.h"
#include "transport_fault.h"

/* The transports this build knows by name; anything else is a plugin path. */
static const char *const builtin_transports[] = {"mpi", "nccl"};

static int readable_plugin(const char *what, const char *path, cg_status *st)
{
    if (access(path, R_OK) == 0)
        return 0;
    cg_error(st, "%s %s: cannot read the plugin: %s", what, path, strerror(errno));
    return CG_EXIT_USAGE;
}

static int check_transport(const char *name, cg_status *st)
{
    if (cg_is_plugin_path(name))
        return readable_plugin("--transport", name, st);
    for (size_t i = 0; i < sizeof builtin_transports / sizeof *builtin_transports; i++)
        if (strcmp(name, builtin_transports[i]) == 0)
            return 0;
    cg_error(st, "--transport %s: unknown transport; expected mpi, nccl or a plugin path "
             "(a name with '/' or ending in .so)", name);
    return CG_EXIT_USAGE;
}

/* A built-in name, or a plugin loaded and ABI-checked here, in the process
 * that launches: the user named it on the command line (a case file cannot:
 * parse_expect.c). The message is the loader's own (rules.c). */
static int check_rules(const char *name, cg_status *st)
{
    if (cg_is_plugin_path(name) && readable_plugin("--rules", name, st) != 0)
        return CG_EXIT_USAGE;
    return cg_rules_load(name, st) ? 0 : CG_EXIT_USAGE;
}

/* A data fault (transport_fault.h) or a process fault (process_fault.h). */
static int check_inject(const char *spec, cg_status *st)
{
    cg_fault f;
    int kind = cg_fault_parse(spec, &f, st);
    if (kind == 0)
        return 0;
    cg_process_fault pf;
    if (kind > 0 && cg_process_fault_parse(spec, &pf, st) == 0)
        return 0;
    if (kind > 0) { /* neither table knows it: the data faults' message names every kind */
        cg_status all = CG_STATUS_OK;
        cg_fault_parse("?", &f, &all);
        char *got = strstr(all.msg, "got '?'");
        if (got)
            *got = '\0';
        cg_error(st, "%sgot '%s'", all.msg, spec);
    }
    return CG_EXIT_USAGE;
}

int cg_preflight_names(const cg_options *o, cg_status *st)
{
    int rc = 0;
    if (!o->oracle_only && !o->backend && o->transport)
        rc = check_transport(o->transport, st);
    if (rc == 0 && !o->backend && o->rules)
        rc = check_rules(o->rules, st);
    if (rc == 0 && o->inject)
        rc = check_inject(o->inject, st);
    return rc;
}

int cg_preflight_selection(const cg_options *o, const cg_case_set *set, int world, cg_status *st)
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
    char list[4 * CG_MAX_WORLD + 1] = "";
    size_t at = 0;
    for (int w = 1; w <= CG_MAX_WORLD; w++)
        if (offered[w])
            at += (size_t)snprintf(list + at, sizeof list - at, " %d", w);
    cg_error(st, "no case runs at world size %d (%s); the %d case%s offer%s:%s", sel.world,
             world > 0 && o->world == 0 ? "the MPI world" : "--world", set->n, set->n == 1 ? "" : "s",
             set->n == 1 ? "s" : "", list);
    return CG_EXIT_USAGE;
}
