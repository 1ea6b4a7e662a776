/* plugin_check.c — see plugin_check.h. The messages are transport.c's, so a
 * user sees the same words whichever process finds the problem. */
#include "plugin_check.h"

#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "transport.h"

/* "nccl" needs a GPU (and a build with CUDA): without one, every rank of
 * every job would fail alike. */
static int nccl_precheck(cg_status *st)
{
#ifdef HAVE_CUDA
    return cg_nccl_available(st);
#else
    return cg_error(st, "%s", CG_NCCL_NOT_BUILT);
#endif
}

int cg_transport_precheck(const char *transport, cg_status *st)
{
    if (transport && strcmp(transport, "nccl") == 0)
        return nccl_precheck(st);
    if (!transport || !cg_is_plugin_path(transport))
        return 0; /* "mpi" is checked where it is opened */
    return cg_transport_load(transport, st) ? 0 : -1;
}
