/* cancel.h — asking a running case to stop: a signal (SIGINT, SIGTERM) or
 * a deadline (--timeout). The lowest layer owns it, because the loops that
 * must answer within a second are low: every tensor the interpreter,
 * autograd or the finite differences make asks cg_cancelled() first (tensor.c),
 * and long kernels ask once per row (ops_matmul.c).
 *
 * State: one process-wide request, written by a signal handler (a
 * sig_atomic_t store, async-signal-safe) or by the run loop that owns the
 * deadline, read everywhere. The first reason wins until cg_cancel_clear. */
#ifndef CG_CANCEL_H
#define CG_CANCEL_H

#include <stdbool.h>
#include <stddef.h>

/* From a signal handler: the run should stop (reason "interrupted by signal N"). */
void cg_cancel_on_signal(int sig);
/* Stop once `seconds` (> 0) have passed from now (reason "deadline"); 0 clears it. */
void cg_cancel_set_deadline(double seconds);
/* Forget a passed deadline (a new job starts); a signal is never forgotten. */
void cg_cancel_clear(void);

/* Whether to stop now; cheap (a flag, and a clock read with a deadline set). */
bool cg_cancelled(void);
/* Why, as a phrase: "interrupted by signal 2", "the 5 s deadline (--timeout)
 * passed"; "" when not cancelled. */
const char *cg_cancel_reason(char *buf, size_t len);

#endif
