/* cancel.h — asking a running case to stop: a signal (SIGINT, SIGTERM) or
 * a deadline (--timeout). The lowest layer owns it, because the loops that
 * must answer within a second are low: every tensor the interpreter,
 * autograd or the finite differences make asks first (cg_check_cancel in
 * tensor.c, against the graph's deadline), and long kernels ask once per row
 * (ops_matmul.c).
 *
 * State: the signal is the one process-wide request, written by a handler (a
 * sig_atomic_t store, async-signal-safe) and never forgotten. A deadline is
 * plain data its owner hands down: the oracle keeps its run's, each graph
 * the one it was given (cg_graph_set_deadline). */
#ifndef CG_CANCEL_H
#define CG_CANCEL_H

#include <stdbool.h>
#include <stddef.h>

/* A point in CLOCK_MONOTONIC seconds after which work stops, and the limit it
 * came from (for the message). at 0 is no deadline. */
typedef struct cg_deadline {
    double at, len;
} cg_deadline;

/* The deadline `seconds` from now; none when seconds <= 0. */
cg_deadline cg_deadline_after(double seconds);

/* From a signal handler: the run should stop (reason "interrupted by signal N"). */
void cg_cancel_on_signal(int sig);
/* The signal received, or 0. */
int cg_cancel_signal(void);

/* Whether to stop now: a signal came, or d (NULL: none) has passed. Cheap: a
 * flag, and a clock read when d is set. */
bool cg_cancelled(const cg_deadline *d);
/* Why, as a phrase: "interrupted by signal 2", "deadline: the 5 s job limit
 * (--timeout) passed"; "" when not cancelled. */
const char *cg_cancel_reason(const cg_deadline *d, char *buf, size_t len);

#endif
