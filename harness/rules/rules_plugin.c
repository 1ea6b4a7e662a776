/* rules_plugin.c — rule sets by name or from a plugin (--rules ./libx.so).
 *
 * A built-in name wins; anything that looks like a path is dlopen'ed and
 * must export CG_RULES_ENTRY (rules.h). The plugin calls the tool's own
 * functions (cg_tp_*, cg_tensor_*, cg_reference_backward), which the
 * executable exports (ENABLE_EXPORTS in CMakeLists.txt). */
#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "rules.h"

/* "reference, c10d, ..." for the unknown-name message. */
static void builtin_names(char *buf, size_t len)
{
    const cg_rules *const *all = cg_rules_all();
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; all[i] && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", all[i]->name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* 0 when a loaded table can be used, else -1 with st saying why. */
static int check_table(const char *path, const cg_rules *r, cg_status *st)
{
    CG_CHECK(r->abi_version == CG_RULES_ABI_VERSION, st,
             "%s: rule set ABI version %d, this collgrad-check "
             "needs %d (rebuild the plugin against this version's rules.h: version 3 replaced "
             "cg_rule_call.in_counts with counts (its inputs[]); version 4 replaced "
             "cg_rules_fail(call, ...) with cg_error(call->st, ...); version 5 added measured, "
             "refuses and nonmember_backward, version 6 refuses_at, at the end of cg_rules, NULL "
             "keeping the old behaviour)",
             path, r->abi_version, CG_RULES_ABI_VERSION);
    CG_CHECK(r->name && r->wiring && r->backward, st, "%s: rule set table has no '%s'", path,
             !r->name ? "name" : !r->wiring ? "wiring" : "backward");
    return 0;
}

/* The library stays loaded once accepted: the table and its strings live in
 * it, and every job of the run uses them. dlopen of the same path again
 * returns the same handle, so loading per job costs nothing. */
static const cg_rules *load_plugin(const char *path, cg_status *st)
{
    void *lib;
    cg_plugin_fn fn = cg_plugin_open(path, CG_RULES_ENTRY, "rule set", &lib, st);
    if (!fn)
        return NULL;
    const cg_rules *r = ((cg_rules_entry_fn)fn)();
    if (!r)
        cg_error(st, "%s: %s() returned NULL", path, CG_RULES_ENTRY);
    else if (check_table(path, r, st) == 0)
        return r;
    cg_plugin_close(lib);
    return NULL;
}

const cg_rules *cg_rules_load(const char *name_or_path, cg_status *st)
{
    if (!name_or_path || !name_or_path[0]) {
        cg_error(st, "no rule set named");
        return NULL;
    }
    const cg_rules *r = cg_rules_find(name_or_path);
    if (r)
        return r;
    if (cg_is_plugin_path(name_or_path))
        return load_plugin(name_or_path, st);
    char names[256];
    builtin_names(names, sizeof names);
    cg_error(st, "unknown rule set '%s' (built in: %s)", name_or_path, names);
    return NULL;
}
