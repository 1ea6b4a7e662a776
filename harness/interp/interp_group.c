/* interp_group.c — process groups in the case language (interp_internal.h):
 *
 *   g = group([1, 2])       the listed ranks (any order; kept ascending)
 *   tp, dp = mesh([A, B])   the world as an A x B grid, ranks in row-major
 *                           order: tp is the rank's row (B ranks, like
 *                           Megatron's tensor-parallel groups [0,1],[2,3]),
 *                           dp its column (A ranks: [0,2],[1,3])
 *   all_reduce(x, sum, group=g), on g { ... }, group_rank(g), group_size(g)
 *
 * As torch.distributed.new_group, making a group is collective: every rank
 * makes every group, member or not, in program order (comm->group, which a
 * worker turns into a communicator split). A group is the same list on every
 * rank; a mesh binds each rank to its own row and column. Roots stay global
 * ranks, as in PyTorch; the call a collective on a group makes is that of a
 * world of the group's size, in which member k is rank k. */
#include "interp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cg_is_group_maker(const cg_expr *e)
{
    return e && e->kind == CG_E_CALL &&
           (strcmp(e->name, "group") == 0 || strcmp(e->name, "mesh") == 0);
}

const cg_group *cg_group_at(const cg_interp *I, int id)
{
    return id >= 0 && id < I->ngroups ? &I->groups[id] : NULL;
}

int cg_group_index(const cg_group *gr, int rank)
{
    for (int k = 0; gr && k < gr->n; k++)
        if (gr->members[k] == rank)
            return k;
    return -1;
}

int cg_group_bound(const cg_interp *I, int slot, const cg_expr *e)
{
    if (!e || e->kind != CG_E_NAME)
        return -1;
    const cg_genv *env = &I->genv[slot];
    for (int i = env->n - 1; i >= 0; i--)
        if (strcmp(env->names[i], e->name) == 0)
            return env->ids[i];
    return -1;
}

static int bind_group(cg_interp *I, int slot, const char *name, int id, cg_srcpos pos)
{
    cg_genv *env = &I->genv[slot];
    for (int i = 0; i < env->n; i++)
        if (strcmp(env->names[i], name) == 0) {
            env->ids[i] = id;
            return 0;
        }
    if (env->n == env->cap) {
        int cap = env->cap ? 2 * env->cap : 4;
        const char **names = realloc(env->names, (size_t)cap * sizeof *names);
        if (names)
            env->names = names;
        int *ids = names ? realloc(env->ids, (size_t)cap * sizeof *ids) : NULL;
        if (!ids)
            return cg_error_at(&I->st, pos, "expected memory for a group, got out of memory");
        env->ids = ids;
        env->cap = cap;
    }
    env->names[env->n] = name;
    env->ids[env->n++] = id;
    return 0;
}

/* A new group of members[0..n) (ascending), made on every rank through the
 * comm. Its id, or -1 with the error set. */
static int make_group(cg_interp *I, const int *members, int n, cg_srcpos pos)
{
    if (I->ngroups == I->capgroups) {
        int cap = I->capgroups ? 2 * I->capgroups : 4;
        cg_group *g = realloc(I->groups, (size_t)cap * sizeof *g);
        if (!g)
            return cg_error_at(&I->st, pos, "expected memory for a group, got out of memory");
        I->groups = g;
        I->capgroups = cap;
    }
    int *copy = malloc((size_t)n * sizeof *copy);
    if (!copy)
        return cg_error_at(&I->st, pos, "expected memory for a group, got out of memory");
    memcpy(copy, members, (size_t)n * sizeof *copy);
    int id = I->ngroups;
    I->groups[I->ngroups++] = (cg_group){n, copy};
    if (I->comm->group && I->comm->group(I->comm->self, I->g, id, copy, n) != 0)
        return cg_error_wrap(&I->st, cg_graph_status(I->g), pos, -1, 0);
    return id;
}

/* The integers of a list literal, the same on every active slot. n, or -1. */
static int int_list(cg_interp *I, const cg_expr *e, const char *what, int64_t *out, int max)
{
    if (!e || e->kind != CG_E_LIST || e->nargs < 1 || e->nargs > max)
        return cg_error_at(&I->st, e ? e->pos : (cg_srcpos){0},
                           "expected a list of 1..%d %s, got %s", max, what,
                           e && e->kind == CG_E_LIST ? "a list of another length" : "no list");
    cg_val *v = calloc((size_t)I->nslots, sizeof *v);
    if (!v)
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    int rc = 0;
    for (int i = 0; i < e->nargs && rc == 0; i++) {
        rc = cg_eval(I, e->args[i], v);
        bool seen = false;
        for (int s = 0; s < I->nslots && rc == 0; s++) {
            int64_t x;
            if (!I->active[s])
                continue;
            rc = cg_val_int(I, &v[s], e->args[i]->pos, s, what, &x);
            if (rc == 0 && seen && x != out[i])
                rc = cg_error_at_rank(&I->st, e->args[i]->pos, cg_slot_rank(I, s), I->world,
                                      "expected the same %s on every rank, got %lld and %lld", what,
                                      (long long)out[i], (long long)x);
            out[i] = x;
            seen = true;
        }
    }
    free(v);
    return rc == 0 ? e->nargs : -1;
}

/* `g = group([r, ...])` */
static int run_group(cg_interp *I, const cg_stmt *st, const cg_expr *call)
{
    int64_t v[CG_MAX_SIM_WORLD];
    int members[CG_MAX_SIM_WORLD];
    if (st->nnames != 1)
        return cg_error_at(&I->st, st->pos, "expected one name for a group, got %d", st->nnames);
    int n = int_list(I, call->args[0], "ranks", v, I->world);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] >= I->world)
            return cg_error_at(&I->st, call->args[0]->args[i]->pos,
                               "expected a rank in 0..%d, got %lld", I->world - 1, (long long)v[i]);
        members[i] = (int)v[i];
    }
    qsort(members, (size_t)n, sizeof *members, cg_cmp_int);
    for (int i = 1; i < n; i++)
        if (members[i] == members[i - 1])
            return cg_error_at(&I->st, call->args[0]->pos,
                               "expected each rank once, got rank %d twice", members[i]);
    int id = make_group(I, members, n, call->pos);
    for (int s = 0; id >= 0 && s < I->nslots; s++)
        if (bind_group(I, s, st->names[0], id, st->pos) != 0)
            return -1;
    return id >= 0 ? 0 : -1;
}

/* `tp, dp = mesh([A, B])`: every row group, then every column group. */
static int run_mesh(cg_interp *I, const cg_stmt *st, const cg_expr *call)
{
    int64_t dim[2];
    if (st->nnames != 2)
        return cg_error_at(&I->st, st->pos,
                           "expected two names for a 2-D mesh (its rows and columns), got %d",
                           st->nnames);
    if (int_list(I, call->args[0], "sizes", dim, 2) != 2)
        return I->st.msg[0]
                   ? -1
                   : cg_error_at(&I->st, call->args[0]->pos, "expected a 2-D mesh [rows, columns]");
    if (dim[0] < 1 || dim[1] < 1 || dim[0] * dim[1] != I->world)
        return cg_error_at(&I->st, call->args[0]->pos,
                           "expected mesh sizes whose product is the world %d, got [%lld, %lld]",
                           I->world, (long long)dim[0], (long long)dim[1]);
    int rows = (int)dim[0], cols = (int)dim[1], members[CG_MAX_SIM_WORLD];
    int first_row = I->ngroups, first_col = first_row + rows;
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++)
            members[c] = r * cols + c;
        if (make_group(I, members, cols, call->pos) < 0)
            return -1;
    }
    for (int c = 0; c < cols; c++) {
        for (int r = 0; r < rows; r++)
            members[r] = r * cols + c;
        if (make_group(I, members, rows, call->pos) < 0)
            return -1;
    }
    for (int s = 0; s < I->nslots; s++)
        if (bind_group(I, s, st->names[0], first_row + I->ranks[s] / cols, st->pos) != 0 ||
            bind_group(I, s, st->names[1], first_col + I->ranks[s] % cols, st->pos) != 0)
            return -1;
    return 0;
}

int cg_run_group_assign(cg_interp *I, const cg_stmt *st)
{
    const cg_expr *call = st->expr;
    for (int s = 0; s < I->nslots; s++) /* collective: no rank may skip it */
        if (!I->active[s])
            return cg_error_at(
                &I->st, call->pos,
                "expected every rank to make the group (as new_group), got an on-block "
                "without rank %d",
                I->ranks[s]);
    return strcmp(call->name, "group") == 0 ? run_group(I, st, call) : run_mesh(I, st, call);
}

int cg_eval_group_query(cg_interp *I, const cg_expr *e, cg_val *out)
{
    bool size = strcmp(e->name, "group_size") == 0;
    for (int s = 0; s < I->nslots; s++) {
        if (!I->active[s])
            continue;
        const cg_group *gr = cg_group_at(I, cg_group_bound(I, s, e->args[0]));
        if (!gr)
            return cg_error_at_rank(&I->st, e->args[0]->pos, cg_slot_rank(I, s), I->world,
                                    "expected a group (made by group() or mesh()), got %s",
                                    e->args[0]->kind == CG_E_NAME ? e->args[0]->name
                                                                  : "an expression");
        /* a non-member's group_rank is -1, as torch.distributed.get_rank(group) */
        out[s] = (cg_val){.s = size ? gr->n : cg_group_index(gr, I->ranks[s])};
    }
    return 0;
}

void cg_groups_free(cg_interp *I)
{
    for (int i = 0; i < I->ngroups; i++)
        free(I->groups[i].members);
    free(I->groups);
    for (int s = 0; I->genv && s < I->nslots; s++) {
        free(I->genv[s].names);
        free(I->genv[s].ids);
    }
    free(I->genv);
}
