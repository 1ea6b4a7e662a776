/* interp_internal.h — state shared by interp.c (statements, bindings) and
 * interp_expr.c / interp_call.c (expressions). Not a public interface. */
#ifndef CG_INTERP_INTERNAL_H
#define CG_INTERP_INTERNAL_H

#include "interp.h"

typedef struct cg_env {
    cg_binding *b;
    int n, cap;
} cg_env;

/* A process group: its members' global ranks, ascending (interp_group.c). */
typedef struct cg_group {
    int n;
    int *members;
} cg_group;

/* One slot's group names: names[i] (owned by the case) is group ids[i]. */
typedef struct cg_genv {
    const char **names;
    int *ids;
    int n, cap;
} cg_genv;

struct cg_interp {
    const cg_case *cs;
    int world, nslots;
    int *ranks;          /* rank of each slot */
    cg_dtype dtype;      /* storage dtype of every tensor */
    cg_graph *g;
    cg_comm *comm;
    cg_env *env;         /* per slot */
    bool *active;        /* slots taking part in the statement being run */
    int stmt;            /* index of the statement being run */
    const char *bind_name; /* first name it assigns ("" for calls): keys random inputs */
    int draws;           /* rand/randn calls so far in this statement */
    int seq;             /* communication calls so far */
    bool has_perturb;
    cg_perturb perturb;
    cg_status st;        /* the last error: "file:line:col: ... (rank R, world W)"; its code
                            CG_EXIT_USAGE, or CG_EXIT_INFRA (memory, a stop: tensor.h) */
    cg_group *groups;    /* every group made, in program order: the id is the index */
    int ngroups, capgroups;
    cg_genv *genv; /* per slot */
    cg_share *share;  /* borrowed (cg_interp_set_share); NULL: no sharing */
    int *share_count; /* nslots ints: cg_share_finish's scratch */
};

/* A value in one slot: a number or a tensor. */
typedef struct cg_val {
    bool is_tensor;
    double s;
    cg_tensor *t;
} cg_val;

/* Evaluate e for every active slot into out[0..nslots-1]. 0 or -1 (error set). */
int cg_eval(cg_interp *I, const cg_expr *e, cg_val *out);
/* Evaluate a call (tensor function, collective, recv). */
int cg_eval_call(cg_interp *I, const cg_expr *e, cg_val *out);

/* One call being evaluated (interp_call.c): its expression and its evaluated
 * arguments, args[i * I->nslots + slot], owned by cg_eval_call. */
typedef struct cg_call {
    cg_interp *I;
    const cg_expr *e;
    cg_val *args;
} cg_call;

/* Index into e->args of positional argument `pos` or keyword `kw`; -1 if absent. */
int cg_arg_at(const cg_expr *e, int pos, const char *kw);
/* Argument i in slot as an integer / a tensor; on failure -1 / NULL with
 * the error set, placed at the argument. */
int cg_call_int(const cg_call *c, int i, int slot, const char *what, int64_t *out);
cg_tensor *cg_call_tensor(const cg_call *c, int i, int slot);
/* A collective or recv call for every active slot (interp_comm.c). 0 or -1. */
int cg_eval_comm(const cg_call *c, cg_val *out);

/* The rank slot simulates, for an error's place (cg_error_at_rank in
 * status.h): a program error names the rank that met it; an op's error is
 * cg_error_wrap of the graph's status, which keeps its class. */
static inline int cg_slot_rank(const cg_interp *I, int slot)
{
    return slot >= 0 ? I->ranks[slot] : -1;
}

/* The explicit row splits of collective call e (cg_coll.splits) from its
 * send_splits argument, when its kind takes one and the call gives it (else
 * *splits = NULL): one row of w counts (w: the world's or the group's size)
 * for each of slots[0..nslots), in that order (a group's: its members by
 * group rank), checked against in[]'s rows and against recv_splits. args are
 * the call's evaluated arguments (args[i * I->nslots + slot]). The caller
 * frees *splits. 0 or -1 (error set). */
int cg_read_splits(cg_interp *I, const cg_expr *e, cg_coll_kind kind, const cg_val *args,
                   cg_tensor **in, const int *slots, int nslots, int w, int64_t **splits);

/* v as a tensor (a number becomes a 0-d constant rounded to the case dtype). */
cg_tensor *cg_val_tensor(cg_interp *I, const cg_val *v);
/* v as an integer; -1 with an error when v is a tensor or not integral. */
int cg_val_int(cg_interp *I, const cg_val *v, cg_srcpos pos, int slot, const char *what,
               int64_t *out);

/* qsort's order of ints, ascending. */
static inline int cg_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* ---- replicated values (interp_share.c) ---- */

/* Whether this op may be shared: sharing on, no perturbation. */
bool cg_share_active(const cg_interp *I);
/* leader[s] for every slot: s, or an earlier active slot with the same
 * operands (args[i * stride + s] for i < nargs), whose result s takes. */
void cg_share_plan(const cg_interp *I, const cg_val *args, int nargs, size_t stride, int *leader);
/* After the leaders computed theirs: out[s] = out[leader[s]], a result of
 * m > 1 slots gets replicas m, and an operand with replicas other than its
 * group's size breaks the symmetry (cg_share). */
void cg_share_finish(cg_interp *I, const cg_val *args, int nargs, size_t stride, const int *leader,
                     cg_val *out);

/* ---- process groups (interp_group.c) ---- */

/* e is group(...) or mesh(...): an assignment of it makes groups. */
bool cg_is_group_maker(const cg_expr *e);
int cg_run_group_assign(cg_interp *I, const cg_stmt *st);
/* The id of the group name e is bound to in slot, or -1 (not a group name). */
int cg_group_bound(const cg_interp *I, int slot, const cg_expr *e);
const cg_group *cg_group_at(const cg_interp *I, int id); /* NULL for a bad id */
/* rank's index among gr's members, or -1 for a non-member. */
int cg_group_index(const cg_group *gr, int rank);
/* group_rank(g) and group_size(g) for every active slot. 0 or -1. */
int cg_eval_group_query(cg_interp *I, const cg_expr *e, cg_val *out);
void cg_groups_free(cg_interp *I);

#endif
