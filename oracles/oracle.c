/* oracle.c — run a case on W simulated ranks and derive both semantics
 * (oracle.h). */
#include "oracle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cancel.h"
#include "hazards.h"
#include "sim_run.h"

void cg_sim_run_close(cg_sim_run *R)
{
    cg_interp_free(R->I);
    cg_sim_free(R->sim);
    cg_graph_free(R->g);
    memset(R, 0, sizeof *R);
}

int cg_sim_run_open(cg_sim_run *R, const cg_case *cs, int world, const cg_perturb *p,
                    cg_sim_mode mode, bool share, const cg_deadline *d, cg_status *st)
{
    int ranks[CG_MAX_SIM_WORLD];
    for (int r = 0; r < world; r++)
        ranks[r] = r;
    memset(R, 0, sizeof *R);
    R->share.on = share && mode == CG_SIM_TRUTH && !p;
    R->g = cg_graph_new();
    R->sim = cg_sim_new(world);
    if (!R->g || !R->sim) {
        cg_error_infra(st, "%s: out of memory", cs->file);
        return CG_EXIT_INFRA;
    }
    if (d)
        cg_graph_set_deadline(R->g, *d);
    cg_sim_set_mode(R->sim, mode);
    cg_sim_set_share(R->sim, &R->share);
    R->comm = cg_sim_comm(R->sim);
    R->I = cg_interp_new(cs, world, ranks, world, CG_F64, R->g, &R->comm);
    if (!R->I) {
        cg_error_infra(st, "%s: out of memory", cs->file);
        return CG_EXIT_INFRA;
    }
    cg_interp_set_perturb(R->I, p);
    cg_interp_set_share(R->I, &R->share);
    int rc = cg_interp_run(R->I);
    /* what is evaluated after the run (expectations) is each rank's own; R
     * may move (the oracle keeps it), so nothing points at R->share after */
    R->share.on = false;
    cg_interp_set_share(R->I, NULL);
    cg_sim_set_share(R->sim, NULL);
    if (rc != 0) {
        cg_error(st, "%s", cg_interp_status(R->I)->msg);
        return cg_interp_status(R->I)->code;
    }
    if (R->share.broken) /* stopped early, to run again unshared: its mailbox is not the program's */
        return 0;
    if (cg_sim_check_mailbox(R->sim, st) != 0)
        return CG_EXIT_USAGE;
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

/* The otensor that already holds replicated tensor t (bound on an earlier
 * rank), or -1. Replicated bindings are few: a linear search. */
static const cg_otensor *holder_of(const cg_oracle *o, const cg_tensor *t,
                                   const cg_tensor *const *seen)
{
    for (int i = 0; i < o->ntensors; i++)
        if (seen[i] == t && !o->tensors[i].holder)
            return &o->tensors[i];
    return NULL;
}

/* Every rank's final bindings as oracle tensors with their values, read in
 * the run's graph, which the oracle keeps; a replicated tensor's values and
 * gradients are held once, by its first binding, and borrowed by the others
 * (cg_otensor.holder). */
static int collect_tensors(cg_oracle *o, const cg_sim_run *R)
{
    int total = 0;
    for (int r = 0; r < o->world; r++) {
        const cg_binding *b;
        total += cg_interp_bindings(R->I, r, &b);
    }
    o->tensors = calloc((size_t)total + 1, sizeof *o->tensors);
    const cg_tensor **seen = calloc((size_t)total + 1, sizeof *seen); /* replicated ones only */
    if (!o->tensors || !seen) {
        free(seen);
        return -1;
    }
    int rc = 0;
    for (int r = 0; r < o->world && rc == 0; r++) {
        const cg_binding *b;
        int n = cg_interp_bindings(R->I, r, &b);
        for (int i = 0; i < n && rc == 0; i++) {
            const cg_tensor *t = b[i].t;
            const cg_otensor *held = t->replicas > 1 ? holder_of(o, t, seen) : NULL;
            seen[o->ntensors] = t->replicas > 1 ? t : NULL;
            cg_otensor *ot = &o->tensors[o->ntensors++];
            ot->name = strdup(b[i].name);
            ot->rank = r;
            ot->stmt = b[i].stmt;
            ot->ndim = t->ndim;
            memcpy(ot->shape, t->shape, sizeof ot->shape);
            ot->numel = t->numel;
            ot->is_param = t->is_leaf;
            ot->replicas = t->replicas > 1 ? t->replicas : 1;
            ot->holder = held;
            /* the run is kept (cg_oracle.run): an f64 host tensor is read where it is */
            ot->value_in_run = !held && t->dtype == CG_F64 && !t->on_device && t->data;
            ot->value = held ? held->value : ot->value_in_run ? (double *)t->data : copy_values(t);
            if (!ot->name || !ot->value) /* per_rank: cg_oracle_derive's */
                rc = -1;
        }
    }
    free(seen);
    return rc;
}

/* An own_loss expectation needs the per-root passes in the first run. */
static bool wants_per_root(const cg_case *cs)
{
    for (int i = 0; i < cs->nexpects; i++)
        if (cs->expects[i]->kind == CG_X_GRAD && cs->expects[i]->semantics == CG_SEM_OWN_LOSS)
            return true;
    return false;
}

static cg_oracle *oracle_run(const cg_case *cs, int world, bool fd, cg_sim_mode mode,
                             cg_deadline d);
static void free_tensors(cg_oracle *o);

/* A run that failed before its gradients were read leaves every per_rank
 * zeros (a holder's for a replicated tensor), so no reader meets NULL. */
static int fill_missing_grads(cg_oracle *o)
{
    for (int i = 0; i < o->ntensors; i++) {
        cg_otensor *ot = &o->tensors[i];
        if (!ot->per_rank)
            ot->per_rank = ot->holder ? ot->holder->per_rank : zeros(ot->numel);
        if (!ot->per_rank)
            return -1;
    }
    return 0;
}

/* A run that failed for want of memory or was stopped says so first, with
 * the phase and the case: "out of memory in the backward pass of case X:
 * <detail>", "deadline: ... passed in the forward pass of case X". */
static void name_infra_error(cg_oracle *o, const cg_case *cs, const char *phase)
{
    char detail[sizeof o->st.msg], why[128];
    snprintf(detail, sizeof detail, "%s", o->st.msg);
    if (cg_cancelled(&o->deadline))
        cg_error_infra(&o->st, "%s in %s of case %s",
                       cg_cancel_reason(&o->deadline, why, sizeof why), phase, cs->name);
    else
        cg_error_infra(&o->st, "out of memory in %s of case %s%s%s", phase, cs->name,
                 detail[0] ? ": " : "", detail);
}

cg_oracle *cg_oracle_run(const cg_case *cs, int world, bool fd)
{
    return oracle_run(cs, world, fd, CG_SIM_TRUTH, cg_deadline_after(0));
}

cg_oracle *cg_oracle_run_within(const cg_case *cs, int world, bool fd, double seconds)
{
    return oracle_run(cs, world, fd, CG_SIM_TRUTH, cg_deadline_after(seconds));
}

cg_oracle *cg_oracle_run_mode(const cg_case *cs, int world, cg_sim_mode mode)
{
    return oracle_run(cs, world, false, mode, cg_deadline_after(0));
}

static cg_oracle *oracle_run(const cg_case *cs, int world, bool fd, cg_sim_mode mode, cg_deadline d)
{
    cg_oracle *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->world = world;
    o->mode = mode;
    o->deadline = d;
    snprintf(o->fd_skip_reason, sizeof o->fd_skip_reason, "not requested");
    cg_sim_run R;
    const char *phase = "the forward pass";
    /* replicated values shared (interp.h cg_share), unless the per-root
     * passes need each rank's own; a program that uses one asymmetrically
     * runs again without */
    bool share = !wants_per_root(cs) && mode == CG_SIM_TRUTH;
    o->st.code = cg_sim_run_open(&R, cs, world, NULL, mode, share, &o->deadline, &o->st);
    if (o->st.code == 0 && R.share.broken) {
        snprintf(o->unshared_reason, sizeof o->unshared_reason, "%s", R.share.broken);
        cg_sim_run_close(&R);
        share = false;
        o->st.code = cg_sim_run_open(&R, cs, world, NULL, mode, false, &o->deadline, &o->st);
    }
    o->shared = share;
    if (o->st.code == 0 && (phase = "copying the forward values", collect_tensors(o, &R) != 0))
        o->st.code = CG_EXIT_INFRA;
    if (o->st.code == 0) {
        phase = "the backward pass";
        o->nbackward = cg_sim_nbackward(R.sim);
        o->st.code = cg_oracle_derive(o, &R, &o->st);
    }
    if (o->st.code == 0 && wants_per_root(cs) &&
        (o->st.code = cg_oracle_derive_per_root(o, &R, &o->st)) == 0)
        o->per_root_ready = true;
    if (o->st.code == 0) {
        const char *nd = cg_graph_nondiff(R.g);
        if (nd && fd)
            snprintf(o->fd_skip_reason, sizeof o->fd_skip_reason, "finite differences do not apply: %s", nd);
        o->events = cg_sim_take_plan(R.sim, &o->nevents);
        if (mode == CG_SIM_TRUTH) /* refused here, before any transport runs it and waits (hazards.h) */
            (void)cg_check_p2p_order(cs, o, &o->st);
        phase = "the finite differences";
        if (fd && !nd && o->st.code == 0)
            o->st.code = cg_oracle_fdcheck(cs, o);
    }
    if (o->st.code == CG_EXIT_INFRA)
        name_infra_error(o, cs, phase);
    if (fill_missing_grads(o) != 0 && o->st.code == 0)
        cg_error_infra(&o->st, "%s: out of memory", cs->file);
    /* the values and gradients read in place live in R's graph: kept */
    if ((o->run = malloc(sizeof *o->run)))
        *o->run = R;
    else
        cg_sim_run_close(&R), free_tensors(o),
            cg_error_infra(&o->st, "%s: out of memory", cs->file);
    return o;
}

int cg_oracle_add_per_root(const cg_case *cs, cg_oracle *o)
{
    if (o->st.code != 0 || o->per_root_ready)
        return o->st.code;
    cg_status st = CG_STATUS_OK;
    cg_sim_run R;
    int rc = cg_sim_run_open(&R, cs, o->world, NULL, o->mode, false, &o->deadline, &st);
    if (rc == 0)
        rc = cg_oracle_derive_per_root(o, &R, &st);
    cg_sim_run_close(&R);
    o->per_root_ready = rc == 0;
    return rc;
}

/* Free the tensors' arrays and names; none of them points anywhere after. */
static void free_tensors(cg_oracle *o)
{
    for (int i = 0; i < o->ntensors; i++) {
        cg_otensor *t = &o->tensors[i];
        free(t->name);
        if (!t->holder) { /* else borrowed from its holder */
            if (!t->value_in_run)
                free(t->value);
            if (!t->per_rank_in_run)
                free(t->per_rank);
            free(t->replicated);
        }
        free(t->own_loss);
        free(t->fd);
        for (int k = 0; t->per_root && k < o->world; k++)
            free(t->per_root[k]);
        free(t->per_root);
    }
    free(o->tensors);
    o->tensors = NULL;
    o->ntensors = 0;
}

void cg_oracle_free(cg_oracle *o)
{
    if (!o)
        return;
    free_tensors(o);
    if (o->run)
        cg_sim_run_close(o->run);
    free(o->run);
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

double cg_oracle_objective(const cg_case *cs, int world, const void *perturb, const cg_deadline *d,
                           cg_status *st)
{
    cg_sim_run R;
    double f = NAN;
    if (cg_sim_run_open(&R, cs, world, perturb, CG_SIM_TRUTH, false, d, st) == 0) {
        f = 0.0;
        for (int k = 0; k < world; k++) {
            cg_tensor *const *roots;
            int n = cg_sim_roots(R.sim, k, &roots);
            for (int i = 0; i < n; i++)
                for (int64_t e = 0; e < roots[i]->numel; e++)
                    f += cg_get(roots[i], e);
        }
    }
    cg_sim_run_close(&R);
    return f;
}

/* e on rank in R's interpreter, after its program: a malloc'd copy. */
static double *eval_in(cg_sim_run *R, const cg_case *cs, int rank, const cg_expr *e, int64_t *n,
                       cg_status *st)
{
    double *v = NULL;
    cg_tensor *t = cg_interp_eval_expect(R->I, e, rank);
    if (!t)
        cg_error(st, "%s", cg_interp_status(R->I)->msg);
    else if ((v = copy_values(t)))
        *n = t->numel;
    else
        cg_error_infra(st, "%s: out of memory", cs->file);
    return v;
}

double *cg_oracle_eval_expr(const cg_oracle *o, const cg_case *cs, int world, int rank, const cg_expr *e,
                            int64_t *n, cg_status *st)
{
    /* the kept run holds every binding's forward value (the backward passes
     * and the finite differences ran elsewhere or add only gradients) */
    if (o && o->run && o->st.code == 0 && o->mode == CG_SIM_TRUTH && o->world == world)
        return eval_in(o->run, cs, rank, e, n, st);
    cg_sim_run R;
    double *v = NULL;
    if (cg_sim_run_open(&R, cs, world, NULL, CG_SIM_TRUTH, false, NULL, st) == 0)
        v = eval_in(&R, cs, rank, e, n, st);
    cg_sim_run_close(&R);
    return v;
}
