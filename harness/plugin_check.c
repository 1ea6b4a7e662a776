/* plugin_check.c — see plugin_check.h. The messages are transport.c's, so a
 * user sees the same words whichever process finds the problem. */
#include "plugin_check.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "collgrad_transport.h"
#include "transport.h"

static bool is_plugin_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') != NULL || (n >= 3 && strcmp(name + n - 3, ".so") == 0);
}

/* "nccl" needs a GPU (and a build with CUDA): without one, every rank of
 * every job would fail alike. */
static int nccl_precheck(char *err, size_t errlen)
{
#ifdef HAVE_CUDA
    return cg_nccl_available(err, errlen);
#else
    snprintf(err, errlen, "%s", CG_NCCL_NOT_BUILT);
    return -1;
#endif
}

int cg_transport_precheck(const char *transport, char *err, size_t errlen)
{
    if (transport && strcmp(transport, "nccl") == 0)
        return nccl_precheck(err, errlen);
    if (!transport || !is_plugin_path(transport))
        return 0; /* "mpi" is checked where it is opened */
    void *lib = dlopen(transport, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(err, errlen, "%s", dlerror());
        return -1;
    }
    void *sym = dlsym(lib, CG_TRANSPORT_ENTRY);
    cg_transport_entry_fn entry = NULL;
    if (sym)
        memcpy(&entry, &sym, sizeof entry); /* ISO C has no object-to-function pointer cast */
    const cg_transport_ops *ops = entry ? entry() : NULL;
    int rc = -1;
    if (!sym)
        snprintf(err, errlen, "%s: no symbol '%s' (not a collgrad-check transport?)", transport,
                 CG_TRANSPORT_ENTRY);
    else if (!ops)
        snprintf(err, errlen, "%s: %s() returned NULL", transport, CG_TRANSPORT_ENTRY);
    else if (ops->abi_version != CG_TRANSPORT_ABI_VERSION)
        snprintf(err, errlen, "%s: transport ABI version %d, this collgrad-check needs %d",
                 transport, ops->abi_version, CG_TRANSPORT_ABI_VERSION);
    else
        rc = 0;
    dlclose(lib); /* nothing of it is kept: the workers load it for real */
    return rc;
}
