/* status.c — recording an error in a cg_status (status.h). */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Formatted into a local buffer first: the old message may be an argument. */
static int record(cg_status *st, int code, const char *prefix, const char *fmt, va_list ap)
{
    if (!st)
        return -1;
    char msg[CG_ERR_LEN];
    int at = snprintf(msg, sizeof msg, "%s", prefix);
    vsnprintf(msg + at, sizeof msg - (size_t)at, fmt, ap);
    memcpy(st->msg, msg, sizeof msg);
    st->code = code == CG_EXIT_USAGE && st->code == CG_EXIT_INFRA ? CG_EXIT_INFRA : code;
    return -1;
}

int cg_verror(cg_status *st, int code, const char *fmt, va_list ap)
{
    return record(st, code, "", fmt, ap);
}

int cg_error(cg_status *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(st, CG_EXIT_USAGE, "", fmt, ap);
    va_end(ap);
    return -1;
}

int cg_error_infra(cg_status *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(st, CG_EXIT_INFRA, "", fmt, ap);
    va_end(ap);
    return -1;
}

int cg_error_at(cg_status *st, cg_srcpos pos, const char *fmt, ...)
{
    if (st && st->code != CG_EXIT_OK)
        return -1;
    char prefix[CG_ERR_LEN];
    snprintf(prefix, sizeof prefix, "%s:%d:%d: ", pos.file ? pos.file : "?", pos.line, pos.col);
    va_list ap;
    va_start(ap, fmt);
    record(st, CG_EXIT_USAGE, prefix, fmt, ap);
    va_end(ap);
    return -1;
}

int cg_error_at_rank(cg_status *st, cg_srcpos pos, int rank, int world, const char *fmt, ...)
{
    if (st && st->code != CG_EXIT_OK)
        return -1;
    char msg[CG_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rank >= 0 && world > 1)
        return cg_error_at(st, pos, "%s (rank %d, world %d)", msg, rank, world);
    return cg_error_at(st, pos, "%s", msg);
}

int cg_error_wrap(cg_status *st, const cg_status *cause, cg_srcpos pos, int rank, int world)
{
    if (st && st->code != CG_EXIT_OK)
        return -1;
    int code = cause->code == CG_EXIT_INFRA ? CG_EXIT_INFRA : CG_EXIT_USAGE;
    cg_error_at_rank(st, pos, rank, world, "%s", cause->msg);
    if (st)
        st->code = code;
    return -1;
}
