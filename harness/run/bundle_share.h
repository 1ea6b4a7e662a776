/* bundle_share.h — the ranks of a launcher's job get its bundle (bundle.h)
 * over MPI: the lowest rank running on the launcher's host reads the file
 * and broadcasts its bytes; every rank parses the same bytes. Only that
 * rank needs the launcher's directory; the others may run on other nodes
 * with their own /tmp.
 *
 * Collective over MPI_COMM_WORLD: every rank calls it, and every rank
 * returns the same verdict (a read failure on the reader is broadcast, so
 * no rank waits for bytes that never come). */
#ifndef CG_BUNDLE_SHARE_H
#define CG_BUNDLE_SHARE_H

#include <stdbool.h>

#include "bundle.h"

/* on_host: this rank runs on the launcher's host. path is read by the
 * reader only. *reader receives the reader's rank. 0; -1 with st (no rank
 * on the launcher's host, the file unreadable, a malformed bundle, MPI
 * failed, out of memory). */
int cg_bundle_receive(const char *path, bool on_host, const cg_limits *lim, cg_case_set *set,
                      cg_job **jobs, int *njobs, int *reader, cg_status *st);

/* This process's host name, as the launcher passes it (--launch-host). */
int cg_host_name(char *buf, size_t len);

#endif
