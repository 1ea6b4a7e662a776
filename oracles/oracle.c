/* oracle.c — run a case on W simulated ranks and derive both semantics
 * (oracle.h). */
#include "oracle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd.h"
#include "interp.h"
#include "sim_comm.h"

/* One simulated run: graph, simulated comm and interpreter, torn down together. */
typedef struct sim_run {
    cg_graph *g;
    cg_sim *sim;
    cg_comm comm;
    cg_interp *I;
} sim_run;

static void run_close(sim_run *R)
{
    cg_interp_free(R->I);
    cg_sim_free(R->sim);
    cg_graph_free(R->g);
}

/* Execute the program. 0; 2 with err for a bad program; 3 when out of memory. */
static int run_open(sim_run *R, const cg_case *cs, int world, const cg_perturb *p, cg_sim_mode mode,
                    char *err, size_t errlen)
{
    int ranks[CG_MAX_WORLD];
    for (int r = 0; r < world; r++)
        ranks[r] = r;
    memset(R, 0, sizeof *R);
    R->g = cg_graph_new();
    R->sim = cg_sim_new(world);
    if (!R->g || !R->sim) {
        snprintf(err, errlen, "%s: out of memory", cs->file);
        return 3;
    }
    cg_sim_set_mode(R->sim, mode);
    R->comm = cg_sim_comm(R->sim);
    R->I = cg_interp_new(cs, world, ranks, world, CG_F64, R->g, &R->comm);
    if (!R->I) {
        snprintf(err, errlen, "%s: out of memory", cs->file);
        return 3;
    }
    cg_interp_set_perturb(R->I, p);
    if (cg_interp_run(R->I) != 0) {
        snprintf(err, errlen, "%s", cg_interp_error(R->I));
        return 2;
    }
    if (cg_sim_check_mailbox(R->sim, err, errlen) != 0)
        return 2;
    return 0;
}

static double *copy_values(const cg_tensor *t)
{
    double *v = malloc(((size_t)t->numel + 1) * sizeof *v);
    if (v)
        for (int64_t i = 0; i < t->numel; i++)
            v[i] = cg_get(t, i);
    return v;
}

static double *zeros(int64_t n) { return calloc((size_t)n + 1, sizeof(double)); }

/* Snapshot every rank's final bindings as oracle tensors with their values. */
static int collect_tensors(cg_oracle *o, const sim_run *R)
{
    int total = 0;
    for (int r = 0; r < o->world; r++) {
        const cg_binding *b;
        total += cg_interp_bindings(R->I, r, &b);
    }
    o->tensors = calloc((size_t)total + 1, sizeof *o->tensors);
    if (!o->tensors)
        return -1;
    for (int r = 0; r < o->world; r++) {
        const cg_binding *b;
        int n = cg_interp_bindings(R->I, r, &b);
        for (int i = 0; i < n; i++) {
            cg_otensor *ot = &o->tensors[o->ntensors++];
            const cg_tensor *t = b[i].t;
            ot->name = strdup(b[i].name);
            ot->rank = r;
            ot->stmt = b[i].stmt;
            ot->ndim = t->ndim;
            memcpy(ot->shape, t->shape, sizeof ot->shape);
            ot->numel = t->numel;
            ot->is_param = t->is_leaf;
            ot->value = copy_values(t);
            ot->per_rank = zeros(t->numel);
            ot->own_loss = zeros(t->numel);
            if (!ot->name || !ot->value || !ot->per_rank || !ot->own_loss)
                return -1;
        }
    }
    return 0;
}

static const cg_tensor *bound(const sim_run *R, const cg_otensor *ot)
{
    const cg_binding *b = cg_interp_lookup(R->I, ot->rank, ot->name);
    return b ? b->t : NULL;
}

/* Per-root gradients G_k (one backward pass per rank k with roots), folded
 * into per_rank and own_loss. Replicated is per_rank / |K| (K: ranks with
 * roots), defined when every G_k agrees on the params: that is what "every
 * rank holds the same loss function" means for the inputs. Tensors
 * downstream of a collective differ per root by construction (rank k's loss
 * reads only rank k's copy), so they are not compared. */
static int derive_semantics(cg_oracle *o, const sim_run *R, char *err, size_t errlen)
{
    double **first = calloc((size_t)o->ntensors + 1, sizeof *first);
    double maxdiff = 0.0, scale = 1.0;
    int first_rank = -1, rc = first ? 0 : 3;
    for (int k = 0; rc == 0 && k < o->world; k++) {
        cg_tensor *const *roots;
        int n = cg_sim_roots(R->sim, k, &roots);
        if (n == 0)
            continue;
        o->nroot_ranks++;
        cg_zero_grad(R->g);
        if (cg_backward(R->g, roots, n) != 0) {
            snprintf(err, errlen, "backward: %s", cg_graph_error(R->g));
            rc = 2;
            break;
        }
        for (int i = 0; rc == 0 && i < o->ntensors; i++) {
            cg_otensor *ot = &o->tensors[i];
            const cg_tensor *t = bound(R, ot);
            if (ot->is_param && first_rank < 0 && !(first[i] = zeros(ot->numel)))
                rc = 3;
            if (!ot->per_root && !(ot->per_root = calloc((size_t)o->world, sizeof *ot->per_root)))
                rc = 3;
            if (rc == 0 && !(ot->per_root[k] = zeros(ot->numel)))
                rc = 3;
            for (int64_t e = 0; rc == 0 && e < ot->numel; e++) {
                double gk = (t && t->grad) ? cg_get(t->grad, e) : 0.0;
                ot->per_root[k][e] = gk;
                ot->per_rank[e] += gk;
                if (ot->rank == k)
                    ot->own_loss[e] = gk;
                if (!ot->is_param)
                    continue;
                if (first_rank < 0)
                    first[i][e] = gk;
                else
                    maxdiff = fmax(maxdiff, fabs(gk - first[i][e]));
                scale = fmax(scale, fabs(gk));
            }
        }
        if (first_rank < 0)
            first_rank = k;
    }
    for (int i = 0; first && i < o->ntensors; i++)
        free(first[i]);
    free(first);
    if (rc != 0)
        return rc;
    o->replicated_defined = o->nroot_ranks > 0 && maxdiff <= 1e-9 * scale;
    if (o->nroot_ranks == 0)
        snprintf(o->replicated_reason, sizeof o->replicated_reason, "no rank called backward");
    else if (o->nroot_ranks == 1)
        snprintf(o->replicated_reason, sizeof o->replicated_reason, "one rank has roots (rank %d)",
                 first_rank);
    else if (o->replicated_defined)
        snprintf(o->replicated_reason, sizeof o->replicated_reason,
                 "the %d ranks' roots give the same gradients on every param", o->nroot_ranks);
    else
        snprintf(o->replicated_reason, sizeof o->replicated_reason,
                 "the ranks' roots are different functions (their gradients on the params differ by "
                 "up to %.6g)", maxdiff);
    for (int i = 0; o->replicated_defined && i < o->ntensors; i++) {
        cg_otensor *ot = &o->tensors[i];
        if (!(ot->replicated = zeros(ot->numel)))
            return 3;
        for (int64_t e = 0; e < ot->numel; e++)
            ot->replicated[e] = ot->per_rank[e] / o->nroot_ranks;
    }
    return 0;
}

static cg_oracle *oracle_run(const cg_case *cs, int world, bool fd, cg_sim_mode mode);

cg_oracle *cg_oracle_run(const cg_case *cs, int world, bool fd)
{
    return oracle_run(cs, world, fd, CG_SIM_TRUTH);
}

cg_oracle *cg_oracle_run_mode(const cg_case *cs, int world, cg_sim_mode mode)
{
    return oracle_run(cs, world, false, mode);
}

static cg_oracle *oracle_run(const cg_case *cs, int world, bool fd, cg_sim_mode mode)
{
    cg_oracle *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->world = world;
    snprintf(o->fd_skip_reason, sizeof o->fd_skip_reason, "not requested");
    sim_run R;
    o->status = run_open(&R, cs, world, NULL, mode, o->error, sizeof o->error);
    if (o->status == 0 && collect_tensors(o, &R) != 0)
        o->status = 3;
    if (o->status == 0) {
        o->nbackward = cg_sim_nbackward(R.sim);
        o->status = derive_semantics(o, &R, o->error, sizeof o->error);
    }
    if (o->status == 0) {
        const char *nd = cg_graph_nondiff(R.g);
        if (nd && fd)
            snprintf(o->fd_skip_reason, sizeof o->fd_skip_reason, "finite differences do not apply: %s", nd);
        o->events = cg_sim_take_plan(R.sim, &o->nevents);
        if (fd && !nd)
            o->status = cg_oracle_fdcheck(cs, o);
    }
    if (o->status == 3 && !o->error[0])
        snprintf(o->error, sizeof o->error, "%s: out of memory", cs->file);
    run_close(&R);
    return o;
}

void cg_oracle_free(cg_oracle *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->ntensors; i++) {
        cg_otensor *t = &o->tensors[i];
        free(t->name);
        free(t->value);
        free(t->per_rank);
        free(t->own_loss);
        free(t->replicated);
        free(t->fd);
        for (int k = 0; t->per_root && k < o->world; k++)
            free(t->per_root[k]);
        free(t->per_root);
    }
    free(o->tensors);
    cg_plan_free(o->events, o->nevents);
    free(o);
}

const cg_otensor *cg_oracle_find(const cg_oracle *o, const char *name, int rank)
{
    for (int i = 0; i < o->ntensors; i++)
        if (o->tensors[i].rank == rank && strcmp(o->tensors[i].name, name) == 0)
            return &o->tensors[i];
    return NULL;
}

double cg_oracle_objective(const cg_case *cs, int world, const void *perturb, char *err,
                           size_t errlen)
{
    sim_run R;
    double f = NAN;
    if (run_open(&R, cs, world, perturb, CG_SIM_TRUTH, err, errlen) == 0) {
        f = 0.0;
        for (int k = 0; k < world; k++) {
            cg_tensor *const *roots;
            int n = cg_sim_roots(R.sim, k, &roots);
            for (int i = 0; i < n; i++)
                for (int64_t e = 0; e < roots[i]->numel; e++)
                    f += cg_get(roots[i], e);
        }
    }
    run_close(&R);
    return f;
}

double *cg_oracle_eval_expr(const cg_case *cs, int world, int rank, const cg_expr *e,
                            int64_t *n, char *err, size_t errlen)
{
    sim_run R;
    double *v = NULL;
    if (run_open(&R, cs, world, NULL, CG_SIM_TRUTH, err, errlen) == 0) {
        cg_tensor *t = cg_interp_eval_expect(R.I, e, rank);
        if (!t)
            snprintf(err, errlen, "%s", cg_interp_error(R.I));
        else if ((v = copy_values(t)))
            *n = t->numel;
        else
            snprintf(err, errlen, "%s: out of memory", cs->file);
    }
    run_close(&R);
    return v;
}
