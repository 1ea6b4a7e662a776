/* plugin_check.h — a transport plugin (or "nccl") checked once, in the
 * launching process, before any mpiexec: a wrong file or ABI version, or no
 * GPU for nccl, gets one clear message and exit status 3, instead of every
 * job's ranks aborting one world at a time. */
#ifndef CG_PLUGIN_CHECK_H
#define CG_PLUGIN_CHECK_H

#include "status.h"

/* 0 when `transport` is "mpi", "nccl" with a CUDA device visible, or a
 * plugin path whose library loads and whose table has this tool's ABI
 * version; -1 with st otherwise (for "nccl": "nccl: no CUDA device is
 * visible (...)", or CG_NCCL_NOT_BUILT in a build without CUDA).
 * The workers still run their own full check (transport.c) when they open it. */
int cg_transport_precheck(const char *transport, cg_status *st);

#endif
