/* diagnose.c — see diagnose.h. */
#include "diagnose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "expect.h"

/* What each known mistake is, in one sentence, and where it comes from. */
typedef struct mistake {
    const char *name, *explanation, *see;
} mistake;

static const mistake mistakes[] = {
    {"c10d", "torch.distributed collectives without autograd: in-place results pass the gradient "
             "straight to the local input, out-of-place results carry none", "pytorch/pytorch#58005"},
    {"torch-nn", "all_reduce backward reduces the gradient with the forward's op (right for SUM only)",
     "pytorch/pytorch#58005"},
    {"gatherlayer", "all_gather backward keeps only the local slice of the local gradient: other "
                    "ranks' losses are dropped", "Spijkervet/SimCLR simclr/modules/gather.py"},
    {"diffdist", "broadcast backward leaves non-root ranks their own gradient instead of zero",
     "ag14774/diffdist"},
    {"torch-funcol", "only SUM collectives have a backward", "torch/distributed/_functional_collectives.py"},
    {"horovod", "gather/broadcast backward averages instead of summing; reduce_scatter backward is "
                "scaled by W", "horovod/horovod#2654"},
    {"torch-xla", "all_reduce backward is the identity; all_gather backward keeps the own slice",
     "pytorch/xla#2989"},
    {"megatron", "all_reduce backward is the identity (correct only when every rank holds the same "
                 "loss: replicated semantics)", "NVIDIA/Megatron-LM tensor_parallel/mappings.py"},
    {"replicated", "the gradient of one copy of a loss every rank holds (replicated semantics): "
                   "per-rank divided by the number of ranks that called backward", "pytorch/pytorch#58005"},
    {"own_loss", "only each rank's own loss counts (dL_r/dx_r): the other ranks' losses are dropped",
     "pytorch/pytorch#58005"},
    {"straight_through", "collectives act as the identity on the local input in backward "
                         "(no communication)", "pytorch/pytorch#58005"},
    {"local_slot", "a gather's backward keeps only the rank's own slice",
     "shared/seeds/001_343aed518b1b6c99.txt"},
    {"scaled_by_world", "the gradient is W times too large (summed where it should be averaged)",
     "horovod/horovod#2654"},
    {"divided_by_world", "the gradient is W times too small (averaged where it should be summed)",
     "pytorch/pytorch#58005"},
};

static const mistake *mistake_named(const char *name)
{
    for (size_t i = 0; i < sizeof mistakes / sizeof mistakes[0]; i++)
        if (strcmp(mistakes[i].name, name) == 0)
            return &mistakes[i];
    return NULL;
}

static const char *first_error(const cg_observed *obs)
{
    for (int r = 0; obs && r < obs->world; r++)
        if (obs->ranks[r].error)
            return obs->ranks[r].error;
    return NULL;
}

bool cg_diag_needed(const cg_case_result *res, const cg_observed *obs, bool *values_wrong)
{
    bool grads = false;
    *values_wrong = false;
    for (int i = 0; i < res->nchecks; i++)
        if (res->checks[i].status == CG_FAIL && strcmp(res->checks[i].semantics, "error") == 0 &&
            first_error(obs))
            return true; /* raised where the truth does not */
    for (int i = 0; i < res->nchecks; i++) {
        const cg_check *k = &res->checks[i];
        if (k->status != CG_FAIL || !k->against || strcmp(k->against, "oracle") != 0)
            continue;
        if (strcmp(k->semantics, "value") == 0)
            *values_wrong = true;
        else if (strcmp(k->semantics, "per_rank") == 0)
            grads = true;
    }
    return grads || *values_wrong;
}

static const cg_obs_tensor *obs_find(const cg_observed *obs, int rank, const char *name)
{
    for (int i = 0; obs && i < obs->ranks[rank].ntensors; i++)
        if (strcmp(obs->ranks[rank].tensors[i].name, name) == 0)
            return &obs->ranks[rank].tensors[i];
    return NULL;
}

static bool close_all(const double *a, const double *b, int64_t n, cg_tol tol, double scale)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(a[i] - scale * b[i]) <= tol.atol + tol.rtol * fabs(scale * b[i])))
            return false;
    return true;
}

/* Does a candidate give the observed gradient of every param on every rank?
 * The candidate is either another run (cand_obs) or an oracle's semantics. */
static bool matches(const cg_diag_inputs *in, const cg_observed *cand_obs, const cg_oracle *cand_o,
                    cg_semantics sem, double scale)
{
    int compared = 0;
    for (int i = 0; i < in->truth->ntensors; i++) {
        const cg_otensor *t = &in->truth->tensors[i];
        if (!t->is_param)
            continue;
        const cg_obs_tensor *have = obs_find(in->obs, t->rank, t->name);
        const double *want = NULL;
        if (cand_obs) {
            const cg_obs_tensor *c = obs_find(cand_obs, t->rank, t->name);
            want = c && c->numel == t->numel ? c->grad : NULL;
        } else {
            const cg_otensor *c = cg_oracle_find(cand_o, t->name, t->rank);
            want = c ? cg_oracle_values(c, sem, false) : NULL;
        }
        if (!have || have->numel != t->numel || !want || !close_all(have->grad, want, t->numel, in->tol, scale))
            return false;
        compared++;
    }
    return compared > 0;
}

/* The collective a name was bound to, "y = reduce_scatter(...)", or NULL. */
static const char *collective_of(const cg_stmt *const *stmts, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        const cg_stmt *st = stmts[i];
        if (st->kind == CG_S_ON) {
            const char *c = collective_of((const cg_stmt *const *)st->body, st->nbody, name);
            if (c)
                return c;
        } else if (st->kind == CG_S_ASSIGN && strcmp(st->names[0], name) == 0 &&
                   st->expr->kind == CG_E_CALL && cg_coll_from_name(st->expr->name) >= 0) {
            return st->expr->name;
        }
    }
    return NULL;
}

/* Wrong forward values: name the tensor, its collective, and, when the value
 * is another rank's, say so — results delivered in the wrong rank order. */
static void diagnose_values(const cg_diag_inputs *in, cg_case_result *res)
{
    char text[768];
    for (int i = 0; i < in->truth->ntensors; i++) {
        const cg_otensor *t = &in->truth->tensors[i];
        const cg_obs_tensor *have = obs_find(in->obs, t->rank, t->name);
        if (!have || have->numel != t->numel || close_all(have->value, t->value, t->numel, in->tol, 1.0))
            continue;
        const char *coll = collective_of((const cg_stmt *const *)in->cs->stmts, in->cs->nstmts, t->name);
        int other = -1;
        for (int k = 0; k < in->truth->world && other < 0; k++) {
            const cg_otensor *o = k == t->rank ? NULL : cg_oracle_find(in->truth, t->name, k);
            if (o && o->numel == t->numel && close_all(have->value, o->value, t->numel, in->tol, 1.0))
                other = k;
        }
        const char *name = other >= 0 ? "wrong_rank_order" : "wrong_forward_value";
        if (other >= 0)
            snprintf(text, sizeof text, "the transport's %s delivers results in the wrong rank order: rank %d "
                     "holds rank %d's value of %s", coll ? coll : "collective", t->rank, other, t->name);
        else
            snprintf(text, sizeof text, "the transport's %s computes a wrong forward value of %s on rank %d "
                     "(not a gradient rule: the collective itself is wrong)", coll ? coll : "collective",
                     t->name, t->rank);
        cg_case_set_diagnosis(res, &name, 1, text, NULL);
        return;
    }
}

static void describe(const char *const *names, int n, cg_case_result *res)
{
    char text[1024];
    if (n == 0) {
        cg_case_set_diagnosis(res, names, 0, "matches no known mistake: the gradients are wrong in a way "
                              "this tool has no name for", NULL);
        return;
    }
    const mistake *m = mistake_named(names[0]);
    static const mistake unnamed = {"", "a rule set this tool has no description for", NULL};
    if (!m)
        m = &unnamed;
    if (n == 1) {
        bool rules = strcmp(m->name, "replicated") && strcmp(m->name, "own_loss") &&
                     strcmp(m->name, "straight_through") && strcmp(m->name, "local_slot") &&
                     strncmp(m->name, "scaled", 6) && strncmp(m->name, "divided", 7);
        snprintf(text, sizeof text, "matches %s%s: %s", rules ? "rule set " : "", names[0], m->explanation);
        cg_case_set_diagnosis(res, names, 1, text, m->see);
        return;
    }
    size_t at = (size_t)snprintf(text, sizeof text, "this case cannot tell apart");
    for (int i = 0; i < n && at < sizeof text; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "%s %s", i == 0 ? "" : i == n - 1 ? " and" : ",",
                               names[i]);
    if (at < sizeof text)
        snprintf(text + at, sizeof text - at, ": they give the same gradients here; %s: %s", names[0],
                 m->explanation);
    cg_case_set_diagnosis(res, names, n, text, m->see);
}

void cg_diagnose(const cg_diag_inputs *in, cg_case_result *res)
{
    bool values_wrong;
    if (!cg_diag_needed(res, in->obs, &values_wrong))
        return;
    if (values_wrong) {
        diagnose_values(in, res);
        if (res->diag_explanation)
            return;
    }
    const char *names[64];
    int n = 0;
    const char *raised = first_error(in->obs);
    if (raised) { /* the same error from the same program: the same mistake */
        for (int i = 0; i < in->nruns && n < 48; i++) {
            const char *e = in->runs[i].obs ? first_error(in->runs[i].obs) : NULL;
            if (e && strcmp(e, raised) == 0)
                names[n++] = in->runs[i].rules;
        }
        describe(names, n, res);
        return;
    }
    for (int i = 0; i < in->nruns && n < 48; i++)
        if (in->runs[i].obs && !first_error(in->runs[i].obs) &&
            matches(in, in->runs[i].obs, NULL, CG_SEM_PER_RANK, 1.0))
            names[n++] = in->runs[i].rules;
    if (in->truth->replicated_defined && matches(in, NULL, in->truth, CG_SEM_REPLICATED, 1.0))
        names[n++] = "replicated";
    if (matches(in, NULL, in->truth, CG_SEM_OWN_LOSS, 1.0))
        names[n++] = "own_loss";
    if (in->straight_through && matches(in, NULL, in->straight_through, CG_SEM_PER_RANK, 1.0))
        names[n++] = "straight_through";
    if (in->local_slot && matches(in, NULL, in->local_slot, CG_SEM_PER_RANK, 1.0))
        names[n++] = "local_slot";
    double w = in->truth->world;
    if (w > 1 && matches(in, NULL, in->truth, CG_SEM_PER_RANK, w))
        names[n++] = "scaled_by_world";
    if (w > 1 && matches(in, NULL, in->truth, CG_SEM_PER_RANK, 1.0 / w))
        names[n++] = "divided_by_world";
    describe(names, n, res);
}
