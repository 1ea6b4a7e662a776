/* transport_fault.h — the fault-injecting transport wrapper (--inject). */
#ifndef CG_TRANSPORT_FAULT_H
#define CG_TRANSPORT_FAULT_H

#include "transport.h"

typedef enum {
    CG_FAULT_NONE,
    CG_FAULT_WRONG_SUM,   /* a reduction's result is off by one on the faulty rank */
    CG_FAULT_DROP_RANK,   /* the faulty rank's contribution is zeros */
    CG_FAULT_SWAP_SLICES, /* gathered blocks 0 and 1 trade places on the faulty rank */
    CG_FAULT_BIT_FLIP,    /* a high significand bit of a received element flips */
    CG_FAULT_SCALE_WORLD, /* a reduction's result is W times too large */
    CG_FAULT_WRONG_ROOT,  /* rooted collectives use root + 1 (on every rank) */
    CG_FAULT_DTYPE_SIZE,  /* half the elements move, as if elements were half as big (every rank) */
    CG_FAULT_COUNT
} cg_fault_kind;

typedef struct cg_fault {
    cg_fault_kind kind;
    int rank;             /* the faulty rank (default 0) */
    char filter[96];      /* only in cases whose name contains this ("" = all) */
} cg_fault;

/* Parse "KIND[:RANK[:CASE]]". 0 for a data fault; 1 when KIND is not one
 * (hang and exit belong to the board); -1 with st when malformed. */
int cg_fault_parse(const char *spec, cg_fault *f, cg_status *st);
/* The ":RANK[:CASE]" tail of an --inject spec (s is what follows KIND; ""
 * leaves *rank alone): RANK digits only, at most 1048575; CASE, when its
 * colon is there, not empty. Shared with process_fault.c. 0, or -1 when the
 * tail is anything else ("1x", "-1", a rank of 20 digits, "0:"). */
int cg_fault_tail_parse(const char *s, int *rank, char *filter, size_t len);

/* Wrap tp's transport (any: built-in, plugin, or a wrapper already) with
 * the fault; the wrapper belongs to tp until cg_fault_uninstall, before
 * close. 0, or -1 with tp->st when out of memory. */
int cg_fault_install(cg_tp *tp, const cg_fault *f);
void cg_fault_uninstall(cg_tp *tp);

/* How many calls on this rank the fault changed visibly since the last
 * call (a value moved beyond the case's tolerance, blocks that differ, a
 * root that moved); a spec that changed nothing tested nothing
 * (injection.h). */
long cg_fault_take_count(cg_tp *tp);

/* The case now running on tp (for the CASE filter) and the tolerance its
 * checks use (what a visible change is). No-ops on an unwrapped tp. */
void cg_fault_set_case(cg_tp *tp, const char *name, double rtol, double atol);

#endif
