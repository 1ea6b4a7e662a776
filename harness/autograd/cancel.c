/* cancel.c — see cancel.h. */
#include "cancel.h"

#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t signal_seen; /* written by handlers only */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cg_deadline cg_deadline_after(double seconds)
{
    return seconds > 0 ? (cg_deadline){now() + seconds, seconds} : (cg_deadline){0, 0};
}

void cg_cancel_on_signal(int sig) { signal_seen = sig; }

int cg_cancel_signal(void) { return signal_seen; }

static bool passed(const cg_deadline *d) { return d && d->at > 0 && now() > d->at; }

bool cg_cancelled(const cg_deadline *d) { return signal_seen || passed(d); }

const char *cg_cancel_reason(const cg_deadline *d, char *buf, size_t len)
{
    if (signal_seen)
        snprintf(buf, len, "interrupted by signal %d", (int)signal_seen);
    else if (passed(d))
        snprintf(buf, len, "deadline: the %g s job limit (--timeout) passed", d->len);
    else if (len)
        buf[0] = '\0';
    return buf;
}
