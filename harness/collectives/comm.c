/* comm.c — names of communication calls and reduction ops (comm.h). */
#include "comm.h"

#include <string.h>

static const char *const coll_names[CG_C_COUNT] = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
    "gather",     "scatter",    "all_to_all",     "send",      "recv",
};

static const char *const redop_names[CG_RED_COUNT] = {"sum", "avg", "prod", "max", "min"};

const char *cg_coll_name(cg_coll_kind k) { return (unsigned)k < CG_C_COUNT ? coll_names[k] : "?"; }

int cg_coll_from_name(const char *s)
{
    for (int k = 0; k < CG_C_COUNT; k++)
        if (strcmp(s, coll_names[k]) == 0)
            return k;
    return -1;
}

const char *cg_redop_name(cg_redop op) { return (unsigned)op < CG_RED_COUNT ? redop_names[op] : "?"; }

int cg_redop_from_name(const char *s)
{
    for (int k = 0; k < CG_RED_COUNT; k++)
        if (strcmp(s, redop_names[k]) == 0)
            return k;
    return -1;
}
