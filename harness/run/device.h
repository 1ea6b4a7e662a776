/* device.h — where a run's tensors live: `--device cpu` (host memory, the
 * CPU loops) or `--device cuda` (device memory, the CUDA kernels), the
 * latter implied by `--transport nccl`.
 *
 * The oracle and the diagnosis re-runs always stay on the host: they are the
 * trusted side of every comparison. Only the run under test moves. */
#ifndef CG_DEVICE_H
#define CG_DEVICE_H

#include <stddef.h>

#include "cli.h"
#include "transport.h"

typedef enum { CG_DEVICE_CPU = 0, CG_DEVICE_CUDA = 1 } cg_device;

/* o->device when given, else cuda for --transport nccl, else cpu. */
cg_device cg_device_of(const cg_options *o);
const char *cg_device_name(cg_device d); /* "cpu", "cuda" */

/* Checked once by the launching process (and by each rank started directly
 * under mpiexec) before anything runs. 0, or an exit status with st:
 * CG_EXIT_USAGE for a combination that cannot work on the device (checked
 * first, so it is said on any machine); CG_EXIT_INFRA when no CUDA device can
 * be used (a build without CUDA, none visible; for --transport nccl its own
 * pre-check says so, plugin_check.h). The combinations:
 * a transport without CGT_CAP_CUDA (mpi takes host buffers), a rule-set
 * plugin (its ABI hands it host tensors), --inject's data faults (they
 * rewrite host buffers). */
int cg_device_precheck(const cg_options *o, cg_status *st);

#endif
