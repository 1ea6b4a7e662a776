/* exit_class.h — how a run ended, the one spelling of it in every layer: a
 * process's exit status, a cg_status's code (status.h), a report's class,
 * and the Python package's collgrad_torch.ExitClass (the same values). */
#ifndef CG_EXIT_CLASS_H
#define CG_EXIT_CLASS_H

typedef enum cg_exit {
    CG_EXIT_OK = 0,    /* every check passed (a cg_status: no error) */
    CG_EXIT_FAIL = 1,  /* a check failed: a wrong gradient, an expectation not met */
    CG_EXIT_USAGE = 2, /* the case's or the user's fault: a bad program, option or plugin */
    CG_EXIT_INFRA = 3, /* not theirs: out of memory, a system call, a stop, a library */
} cg_exit;

#endif
