/* rules.h — rule sets: the backward formula of every collective.
 *
 * `reference` is DESIGN section 3 (correct under per-rank semantics); the
 * others emulate known implementations (section 4) so the tool can reproduce
 * their numbers and name the bug a backend has. A rule set sees only the
 * transport table (through transport.h) and host tensors.
 *
 * The forward value of a collective is the same under every rule set (it is
 * what the collective computes); rule sets differ in how autograd is wired to
 * the output (wiring) and in what the backward computes (backward). */
#ifndef CG_RULES_H
#define CG_RULES_H

#include "comm.h"
#include "transport.h"

typedef enum {
    CG_WIRE_COLLECTIVE, /* a node whose backward is this rule set's backward() */
    CG_WIRE_IDENTITY,   /* in-place op autograd never saw: dx = dy, no communication (c10d) */
    CG_WIRE_DETACHED,   /* out-of-place output without grad_fn: no gradient at all (c10d) */
} cg_wiring;

/* Everything a backward formula may need about one call. */
typedef struct cg_rule_call {
    cg_tp *tp;
    const cg_coll *coll;      /* kind, op, root, peer */
    int rank, world;
    const size_t *in_counts;  /* elements of the collective's input on every rank (world entries) */
    const cg_tensor *x;       /* this rank's input (forward value) */
    const cg_tensor *y;       /* this rank's output (forward value) */
    const cg_tensor *gy;      /* gradient arriving at y; zeros when none reached it */
    cg_tensor *gx;            /* to fill: gradient for x, zero on entry, x's shape and dtype */
    char *err;                /* on failure: a message ("backward of all_reduce(prod) ...") */
    size_t errlen;
} cg_rule_call;

typedef struct cg_rules {
    const char *name;         /* "reference", "c10d", ... */
    const char *emulates;     /* what it reproduces, one line */
    const char *see;          /* the code or issue it cites */
    cg_wiring (*wiring)(const cg_coll *c);
    /* The collective kinds CG_C_ALL_REDUCE..CG_C_ALL_TO_ALL; send and recv are
     * wired by the worker (recv's backward sends gy back, send's receives it).
     * Returns 0, or -1 with call->err set. */
    int (*backward)(cg_rule_call *call);
} cg_rules;

/* The built-in rule set named `name`, or NULL. */
const cg_rules *cg_rules_find(const char *name);
/* All built-in rule sets, NULL-terminated, reference first. */
const cg_rules *const *cg_rules_all(void);

extern const cg_rules cg_rules_reference;
extern const cg_rules cg_rules_c10d;
extern const cg_rules cg_rules_torch_nn;
extern const cg_rules cg_rules_gatherlayer;
extern const cg_rules cg_rules_diffdist;

/* Shared by the rule sets: the reference backward of one collective kind,
 * so an emulation overrides only what it changes. */
int cg_reference_backward(cg_rule_call *call);
cg_wiring cg_wiring_all_collective(const cg_coll *c);

/* Offsets of rank blocks from counts: off[r] = sum_{k<r} counts[k]. */
void cg_counts_offsets(const size_t *counts, int world, size_t *off);

/* Helpers the rule sets share (rules.c). */
cgt_redop cg_rules_tp_op(cg_redop op);
/* call->err = "backward of all_reduce(prod): <message>"; returns -1. */
int cg_rules_fail(cg_rule_call *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* call->err from the transport's message (call->tp->err); returns -1. */
int cg_rules_tp_fail(cg_rule_call *call);

#endif
