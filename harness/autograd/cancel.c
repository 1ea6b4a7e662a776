/* cancel.c — see cancel.h. */
#include "cancel.h"

#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t signal_seen; /* written by handlers only */
static double deadline_at, deadline_len;  /* CLOCK_MONOTONIC seconds; 0 = none */
static bool deadline_passed;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cg_cancel_on_signal(int sig) { signal_seen = sig; }

void cg_cancel_set_deadline(double seconds)
{
    deadline_len = seconds > 0 ? seconds : 0;
    deadline_at = seconds > 0 ? now() + seconds : 0;
    deadline_passed = false;
}

void cg_cancel_clear(void) { cg_cancel_set_deadline(0); }

bool cg_cancelled(void)
{
    if (signal_seen)
        return true;
    if (deadline_at > 0 && !deadline_passed && now() > deadline_at)
        deadline_passed = true;
    return deadline_passed;
}

const char *cg_cancel_reason(char *buf, size_t len)
{
    if (signal_seen)
        snprintf(buf, len, "interrupted by signal %d", (int)signal_seen);
    else if (cg_cancelled())
        snprintf(buf, len, "deadline: the %g s job limit (--timeout) passed", deadline_len);
    else if (len)
        buf[0] = '\0';
    return buf;
}
