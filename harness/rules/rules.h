/* rules.h — rule sets: the backward formula of every collective.
 *
 * `reference` is design.md section 3 (correct under per-rank semantics); the
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
#include "plan.h"
#include "transport.h"

typedef enum {
    CG_WIRE_COLLECTIVE, /* a node whose backward is this rule set's backward() */
    CG_WIRE_IDENTITY,   /* in-place op autograd never saw: dx = dy, no communication (c10d) */
    CG_WIRE_DETACHED,   /* out-of-place output without grad_fn: no gradient at all (c10d) */
} cg_wiring;

/* Everything a backward formula may need about one call. */
typedef struct cg_rule_call {
    cg_tp *tp;
    cg_tp_site site;          /* the program call it serves: pass it to every cg_tp_* call */
    const cg_coll *coll;      /* kind, op, root, peer */
    int rank, world;
    /* The forward's element counts on this rank, as its transport call took
     * them (plan.h): inputs[r] rank r's input, blocks and recv the blocks it
     * split and received. The transpose swaps them; nothing is re-derived. */
    const cg_coll_counts *counts;
    const cg_tensor *x;       /* this rank's input (forward value) */
    const cg_tensor *y;       /* this rank's output (forward value) */
    const cg_tensor *gy;      /* gradient arriving at y; zeros when none reached it */
    cg_tensor *gx;            /* to fill: gradient for x, zero on entry, x's shape and dtype */
    cg_status *st; /* on failure: cg_error(call->st, ...); cg_rules_backward names the call */
} cg_rule_call;

/* A rule-set plugin (--rules ./libx.so) is a shared object exporting
 *     const cg_rules *collgrad_rules(void);
 * The tool refuses a table whose abi_version differs from this one; the
 * number changes whenever cg_rules or cg_rule_call changes layout. */
#define CG_RULES_ABI_VERSION                                                                       \
    6 /* 2: cg_rules.docs; 3: cg_rule_call.counts and .st;
                                  4: cg_error(call->st, ...) replaces cg_rules_fail;
                                  5: cg_rules.measured, refuses, nonmember_backward;
                                     cg_coll.members valid in backward, cg_coll.sized;
                                  6: cg_rules.refuses_at */
#define CG_RULES_ENTRY "collgrad_rules"
typedef const struct cg_rules *(*cg_rules_entry_fn)(void);

/* A rule set's own account of one backward, the one place that says what
 * it does (the diagnosis quotes it): the backward of `kind` with reduction
 * `op`, or with any op when op is CG_DOC_ANY_OP. A table ends with kind
 * CG_C_COUNT; a kind it does not list behaves as `reference`. */
#define CG_DOC_ANY_OP (-1)
typedef struct cg_backward_doc {
    cg_coll_kind kind;
    int op;                   /* a cg_redop, or CG_DOC_ANY_OP */
    const char *text;         /* "dx_i = sum_r g_r (an all_reduce SUM of g)" */
} cg_backward_doc;

typedef struct cg_rules {
    int abi_version;          /* CG_RULES_ABI_VERSION; first, so any version can be checked */
    const char *name;         /* "reference", "c10d", ... */
    const char *emulates;     /* what it reproduces, one line */
    const char *see;          /* the code or issue it cites */
    cg_wiring (*wiring)(const cg_coll *c);
    /* The collective kinds CG_C_ALL_REDUCE..CG_C_ALL_TO_ALL; send and recv are
     * wired by the worker (recv's backward sends gy back, send's receives it).
     * Returns 0, or -1 with call->st set by cg_error (status.h), the
     * transport's own message (call->tp->st) passed on as it is; the caller,
     * through cg_rules_backward, names the call. */
    int (*backward)(cg_rule_call *call);
    const cg_backward_doc *docs; /* what backward does, per (collective, op); NULL: undocumented */
    /* ABI 5. The framework versions measured to behave as this table says,
     * and where the measurement is kept: "torch 1.13.0 and 2.15.0, gloo
     * (tests/torch/findings-subgroups.txt)". NULL: no framework's, or not
     * measured. A table that models one version window names itself
     * "family@version" (torch-nn@2.4); cg_rules_find("family") is the
     * family's first table. */
    const char *measured;
    /* A call the framework refuses outright: its message ("all_gather on a
     * process group raises: ..."), which the worker raises at the forward on
     * every member; NULL: no refusal. NULL table entry: refuses nothing. The
     * answer must depend on c alone, so every member refuses alike. */
    const char *(*refuses)(const cg_coll *c);
    /* A non-member's call on a process group returns its own input (design.md
     * section 13); what flows back to that input. call->tp is NULL, call->rank -1,
     * call->counts NULL: no communication. NULL table entry: the gradient
     * passes through (reference). */
    int (*nonmember_backward)(cg_rule_call *call);
    /* ABI 6. Where a refused call raises on a rank: CG_PHASE_FORWARD (the
     * call raises; also what a NULL entry means) or CG_PHASE_BACKWARD (the
     * forward goes through, a member's over the transport, and the call's
     * backward raises on that rank, before it communicates). `member`: the
     * rank is in the call's group. As refuses, the answer depends on c and
     * member alone, so every member raises in the same phase. */
    cg_phase (*refuses_at)(const cg_coll *c, bool member);
} cg_rules;

/* What r's backward of `kind` with reduction `op` does, one phrase: r's own
 * statement, else, when r does not list the kind, reference's (*inherited
 * set); NULL when neither says. */
const char *cg_rules_describe(const cg_rules *r, cg_coll_kind kind, cg_redop op, bool *inherited);

/* r->backward(call); a failure's message is named after the call, once:
 * "backward of all_reduce(prod): <what the rule set said>". 0 or -1. */
int cg_rules_backward(const cg_rules *r, cg_rule_call *call);

/* The built-in rule set named `name`, or NULL. A family name without a
 * version ("torch-nn") finds the family's first table ("torch-nn@1.13"). */
const cg_rules *cg_rules_find(const char *name);
/* All built-in rule sets, NULL-terminated, reference first. */
const cg_rules *const *cg_rules_all(void);
/* A built-in name, else a plugin path (containing '/' or ending in .so) whose
 * table is checked (rules_plugin.c). NULL with st on failure. */
const cg_rules *cg_rules_load(const char *name_or_path, cg_status *st);

extern const cg_rules cg_rules_reference;
extern const cg_rules cg_rules_c10d;
extern const cg_rules cg_rules_torch_nn; /* torch-nn@1.13 */
extern const cg_rules cg_rules_torch_nn_2_4;
extern const cg_rules cg_rules_gatherlayer;
extern const cg_rules cg_rules_diffdist;
extern const cg_rules cg_rules_torch_funcol; /* torch-funcol@2.15 */
extern const cg_rules cg_rules_torch_funcol_2_4;
extern const cg_rules cg_rules_horovod;
extern const cg_rules cg_rules_torch_xla;
extern const cg_rules cg_rules_megatron;

/* Shared by the rule sets: the reference backward of one collective kind,
 * so an emulation overrides only what it changes. */
int cg_reference_backward(cg_rule_call *call);
/* Whether the reference backward of c on `rank` (the call's rank) writes
 * every element of gx: its transpose receives into gx there. Off the root of
 * a root-only transpose (a reduce, a gather) gx keeps its zeros. The worker
 * then hands `reference` a gx it need not clear first (tensor.h). */
bool cg_reference_fills_gx(const cg_coll *c, int rank);
cg_wiring cg_wiring_all_collective(const cg_coll *c);

/* Offsets of rank blocks from counts: off[r] = sum_{k<r} counts[k]. */
void cg_counts_offsets(const size_t *counts, int world, size_t *off);

/* Helpers the rule sets share (rules.c). */
cgt_redop cg_rules_tp_op(cg_redop op);
/* call->st = "not supported by <by>"; returns -1. For implementations that
 * raise: an expected error, not a number. */
int cg_rules_unsupported(cg_rule_call *call, const char *by);
/* gx = gy with no communication: a backward autograd sees as identity. */
int cg_rules_pass_gradient(cg_rule_call *call);
/* gx = gy[this rank's block of counts->inputs], no communication: an all_gather
 * backward that keeps the local slice of the local gradient only. */
int cg_rules_keep_own_slice(cg_rule_call *call);

#endif
