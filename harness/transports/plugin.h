/* plugin.h — opening a plugin shared object and finding its one entry
 * symbol; transports (transport.c) and rule sets (rules_plugin.c) check the
 * table it returns themselves. */
#ifndef CG_PLUGIN_H
#define CG_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

typedef void (*cg_plugin_fn)(void); /* cast to the entry's real type */

/* A name that is a path ("./libx.so", "/opt/y.so"), not a built-in name. */
bool cg_is_plugin_path(const char *name);

/* dlopen(path) and dlsym(symbol). Returns the entry, or NULL with st
 * "PATH: <dlerror>" or "PATH: no symbol 'S' (not a collgrad-check WHAT?)".
 * *lib receives the handle for cg_plugin_close. */
cg_plugin_fn cg_plugin_open(const char *path, const char *symbol, const char *what, void **lib, cg_status *st);
void cg_plugin_close(void *lib);

#endif
