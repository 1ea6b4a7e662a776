/* check_sync.h — --check-sync: before every collective, each rank's
 * fingerprint of the call it is about to issue is compared with every other
 * rank's over plain MPI (never the transport under test), and a mismatch is
 * a "desync" error instead of a hang or a wrong answer. A watcher stacked on
 * the handle (transport.h); it follows into process groups, where a group's
 * members compare among themselves over a split of the world's communicator
 * made with the group. */
#ifndef CG_CHECK_SYNC_H
#define CG_CHECK_SYNC_H

#include "transport.h"

/* Stack the check on the world's handle tp. 0, or -1 with tp->st. */
int cg_check_sync_install(cg_tp *tp);

/* A rank whose program has ended (finished or failed) says so to the check
 * (when installed on tp, else nothing happens); every rank calls it: every
 * rank's end meets the others' ends, and a rank still waiting in a
 * collective is told "desync: rank R ended its program while rank 0 issued
 * ..." instead of waiting until the deadline.
 * 0, or -1 with tp->st (the desync). */
int cg_check_sync_end(cg_tp *tp);

#endif
