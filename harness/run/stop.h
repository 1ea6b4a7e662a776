/* stop.h — SIGINT and SIGTERM end a run between jobs instead of killing the
 * process, so the report still records what finished and what did not. */
#ifndef CG_STOP_H
#define CG_STOP_H

void cg_stop_install(void);  /* main() installs it first thing (not in workers) */
int cg_stop_signal(void);    /* the signal received, or 0 */

#endif
