/* plugin.c — see plugin.h. */
#include "plugin.h"

#include <dlfcn.h>
#include <string.h>

bool cg_is_plugin_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') != NULL || (n >= 3 && strcmp(name + n - 3, ".so") == 0);
}

cg_plugin_fn cg_plugin_open(const char *path, const char *symbol, const char *what, void **lib, cg_status *st)
{
    *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*lib) {
        cg_error(st, "%s: %s", path, dlerror());
        return NULL;
    }
    void *sym = dlsym(*lib, symbol);
    if (!sym) {
        cg_error(st, "%s: no symbol '%s' (not a collgrad-check %s?)", path, symbol, what);
        dlclose(*lib);
        *lib = NULL;
        return NULL;
    }
    cg_plugin_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* ISO C has no object-to-function pointer cast */
    return fn;
}

void cg_plugin_close(void *lib)
{
    if (lib)
        dlclose(lib);
}
