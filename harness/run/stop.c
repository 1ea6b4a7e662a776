/* stop.c — see stop.h. */
#include "stop.h"

#include "cancel.h"

#include <signal.h>
#include <string.h>

/* One flag, cancel.h's: it stops the job in progress within one op, and the
 * run loop reads it between jobs (cg_stop_signal). */
static void on_stop(int sig) { cg_cancel_on_signal(sig); }

/* sigaction, not signal(): under ISO C (-std=c11) glibc's signal() has
 * System V semantics, one-shot, so a second SIGINT killed the run with its
 * report unwritten. No SA_RESTART: a wait or sleep in progress returns EINTR
 * and its loop sees the flag at once. */
void cg_stop_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cg_stop_signal(void) { return cg_cancel_signal(); }
