/* status.h — how an error travels, in every layer: one status type that
 * carries the message and its class once, where the error happens, and the
 * CHECK/TRY macros that pass it up (NCCL's checks.h is the model). A
 * function that can fail returns 0 or -1 (or a pointer or NULL) and fills
 * the cg_status its caller handed it; whoever reports the error reads
 * st.msg, and st.code says whose fault it was (the exit status it maps to).
 *
 * A cg_status is plain data the caller owns (usually on its stack); zero it
 * (CG_STATUS_OK) before the call. Nothing here allocates. */
#ifndef CG_STATUS_H
#define CG_STATUS_H

#include <stdarg.h>

#include "exit_class.h"

#ifdef __cplusplus
extern "C" { /* the GPU module's kernel files are CUDA C++ */
#endif

#define CG_ERR_LEN 512

/* A place in a case file (an error's location). */
typedef struct cg_srcpos {
    const char *file; /* owned by the case */
    int line, col;    /* 1-based */
} cg_srcpos;

typedef struct cg_status {
    int code;             /* cg_exit: CG_EXIT_OK, CG_EXIT_USAGE (the case's or the user's fault) or
                             CG_EXIT_INFRA (not theirs), the exit status the error maps to */
    char msg[CG_ERR_LEN]; /* "" while code is CG_EXIT_OK */
} cg_status;

#define CG_STATUS_OK ((cg_status){CG_EXIT_OK, ""})

/* Record an error in st (a NULL st records nothing) and return -1, so a
 * failing function ends with `return cg_error(st, ...)`. The message is
 * formatted before it is stored, so st->msg may be one of the arguments
 * (a message rewritten with more context); rewriting keeps an infra error
 * infra. */
int cg_error(cg_status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cg_error_infra(cg_status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cg_error's core, for wrappers that hold a status in their own context
 * (a graph's, an interpreter's): code CG_EXIT_USAGE or CG_EXIT_INFRA. -1. */
int cg_verror(cg_status *st, int code, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* "file:line:col: <message>" (the case language's place of an error). A
 * located error is a cause: one already in st is earlier, so it stands and
 * the later one, its consequence, is dropped (this and the two below). */
int cg_error_at(cg_status *st, cg_srcpos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same, for an error one simulated rank met running the case:
 * "file:line:col: <message> (rank R, world W)"; rank < 0 or world <= 1 leaves
 * the rank out. */
int cg_error_at_rank(cg_status *st, cg_srcpos pos, int rank, int world, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* cause's message placed at pos on rank (as cg_error_at_rank), keeping the
 * cause's class: how a layer above reports what a layer below said. A cause
 * without a message or class reads as the case's fault. */
int cg_error_wrap(cg_status *st, const cg_status *cause, cg_srcpos pos, int rank, int world);

/* return -1 (st set) unless cond holds */
#define CG_CHECK(cond, st, ...)                                                                   \
    do {                                                                                          \
        if (!(cond))                                                                              \
            return cg_error((st), __VA_ARGS__);                                                   \
    } while (0)
/* return -1 when call fails (it has set the status) */
#define CG_TRY(call)                                                                              \
    do {                                                                                          \
        if ((call) != 0)                                                                          \
            return -1;                                                                            \
    } while (0)
/* rc = -1 and goto label when call fails: for functions that must release
 * what they hold (NCCL's NCCLCHECKGOTO) */
#define CG_TRYGOTO(call, rc, label)                                                               \
    do {                                                                                          \
        if ((call) != 0) {                                                                        \
            (rc) = -1;                                                                            \
            goto label;                                                                           \
        }                                                                                         \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
