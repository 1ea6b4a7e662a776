/* stop.c — see stop.h. */
#include "stop.h"

#include <signal.h>

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

void cg_stop_install(void)
{
    signal(SIGINT, on_stop);
    signal(SIGTERM, on_stop);
}

int cg_stop_signal(void) { return stop_signal; }
