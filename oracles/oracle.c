/* oracle.c — run a case on W simulated ranks and derive both semantics
 * (oracle.h). */
#include "oracle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cancel.h"
#include "sim_run.h"

void cg_sim_run_close(cg_sim_run *R)
{
    cg_interp_free(R->I);
    cg_sim_free(R->sim);
    cg_graph_free(R->g);
    memset(R, 0, sizeof *R);
}

int cg_sim_run_open(cg_sim_run *R, const cg_case *cs, int world, const cg_perturb *p,
                    cg_sim_mode mode, const cg_deadline *d, cg_status *st)
{
    int ranks[CG_MAX_WORLD];
    for (int r = 0; r < world; r++)
        ranks[r] = r;
    memset(R, 0, sizeof *R);
    R->g = cg_graph_new();
    R->sim = cg_sim_new(world);
    if (!R->g || !R->sim) {
        cg_error_infra(st, "%s: out of memory", cs->file);
        return 3;
    }
    if (d)
        cg_graph_set_deadline(R->g, *d);
    cg_sim_set_mode(R->sim, mode);
    R->comm = cg_sim_comm(R->sim);
    R->I = cg_interp_new(cs, world, ranks, world, CG_F64, R->g, &R->comm);
    if (!R->I) {
        cg_error_infra(st, "%s: out of memory", cs->file);
        return 3;
    }
    cg_interp_set_perturb(R->I, p);
    if (cg_interp_run(R->I) != 0) {
        cg_error(st, "%s", cg_interp_status(R->I)->msg);
        return cg_interp_status(R->I)->code;
    }
    if (cg_sim_check_mailbox(R->sim, st) != 0)
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
static int collect_tensors(cg_oracle *o, const cg_sim_run *R)
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
            if (!ot->name || !ot->value || !ot->per_rank)
                return -1;
        }
    }
    return 0;
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
    o->st.code = cg_sim_run_open(&R, cs, world, NULL, mode, &o->deadline, &o->st);
    if (o->st.code == 0 && (phase = "copying the forward values", collect_tensors(o, &R) != 0))
        o->st.code = 3;
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
        phase = "the finite differences";
        if (fd && !nd)
            o->st.code = cg_oracle_fdcheck(cs, o);
    }
    if (o->st.code == 3)
        name_infra_error(o, cs, phase);
    cg_sim_run_close(&R);
    return o;
}

int cg_oracle_add_per_root(const cg_case *cs, cg_oracle *o)
{
    if (o->st.code != 0 || o->per_root_ready)
        return o->st.code;
    cg_status st = CG_STATUS_OK;
    cg_sim_run R;
    int rc = cg_sim_run_open(&R, cs, o->world, NULL, o->mode, &o->deadline, &st);
    if (rc == 0)
        rc = cg_oracle_derive_per_root(o, &R, &st);
    cg_sim_run_close(&R);
    o->per_root_ready = rc == 0;
    return rc;
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

double cg_oracle_objective(const cg_case *cs, int world, const void *perturb, const cg_deadline *d,
                           cg_status *st)
{
    cg_sim_run R;
    double f = NAN;
    if (cg_sim_run_open(&R, cs, world, perturb, CG_SIM_TRUTH, d, st) == 0) {
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

double *cg_oracle_eval_expr(const cg_case *cs, int world, int rank, const cg_expr *e,
                            int64_t *n, cg_status *st)
{
    cg_sim_run R;
    double *v = NULL;
    if (cg_sim_run_open(&R, cs, world, NULL, CG_SIM_TRUTH, NULL, st) == 0) {
        cg_tensor *t = cg_interp_eval_expect(R.I, e, rank);
        if (!t)
            cg_error(st, "%s", cg_interp_status(R.I)->msg);
        else if ((v = copy_values(t)))
            *n = t->numel;
        else
            cg_error_infra(st, "%s: out of memory", cs->file);
    }
    cg_sim_run_close(&R);
    return v;
}
