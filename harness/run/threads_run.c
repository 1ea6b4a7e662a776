/* threads_run.c — one case under one rule set on W threads over the
 * in-process transport (threads_run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "rank_run.h"
#include "threads_run.h"

#include <pthread.h>

typedef struct rank_run {
    const cg_case *cs;
    const cg_oracle *plan;
    const cg_rules *rules;
    cg_threads *sh;
    int rank;
    cg_obs_rank *out;
    bool oom;
} rank_run;

static double *copy_values(const cg_tensor *t, int64_t n)
{
    double *v = calloc((size_t)n + 1, sizeof *v);
    for (int64_t i = 0; v && t && i < n; i++)
        v[i] = cg_get(t, i);
    return v;
}

/* The final bindings of the rank's interpreter into out (host tensors: the
 * runner never uses a device). false when out of memory. */
static bool keep_bindings(const cg_interp *I, cg_obs_rank *out)
{
    const cg_binding *b = NULL;
    int n = cg_interp_bindings(I, 0, &b);
    out->tensors = calloc((size_t)n + 1, sizeof *out->tensors);
    if (!out->tensors)
        return false;
    for (int i = 0; i < n; i++) {
        cg_obs_tensor *t = &out->tensors[out->ntensors++];
        t->name = strdup(b[i].name);
        t->ndim = b[i].t->ndim;
        memcpy(t->shape, b[i].t->shape, sizeof t->shape);
        t->numel = b[i].t->numel;
        t->value = copy_values(b[i].t, t->numel);
        t->grad = copy_values(b[i].t->grad, t->numel);
        if (!t->name || !t->value || !t->grad)
            return false;
    }
    return true;
}

static void *rank_main(void *arg)
{
    rank_run *rr = arg;
    int me = rr->rank;
    cg_tp tp;
    cg_threads_tp(rr->sh, me, &tp);
    cg_rank_run r;
    if (cg_rank_run_program(&r, rr->cs, rr->rules, &tp, rr->plan->events, rr->plan->nevents, false,
                            NULL, NULL) != 0) {
        if (!r.I) {
            rr->oom = true;
            cg_threads_abort(rr->sh, "rank %d: %s", me, r.st.msg);
        } else {
            rr->out->error = strdup(cg_interp_status(r.I)->msg);
            rr->oom = !rr->out->error;
            cg_threads_abort(rr->sh, "rank %d failed: %s", me, cg_interp_status(r.I)->msg);
        }
    }
    cg_threads_finished(rr->sh, me);
    if (r.I && !keep_bindings(r.I, rr->out))
        rr->oom = true;
    cg_rank_run_end(&r);
    return NULL;
}

static int run_threads(const cg_case *cs, const cg_oracle *plan, const cg_rules *rules, cg_misorder m,
                       cg_observed *obs, cg_status *st)
{
    int world = plan->world;
    memset(obs, 0, sizeof *obs);
    obs->world = world;
    rank_run *runs = calloc((size_t)world, sizeof *runs);
    pthread_t *threads = calloc((size_t)world, sizeof *threads);
    cg_threads *sh = runs && threads ? cg_threads_new(world, m, st) : NULL;
    if (!sh) {
        free(runs);
        free(threads);
        if (st && !st->code)
            cg_error_infra(st, "out of memory for %d threads", world);
        return -1;
    }
    int started = 0, rc = 0;
    for (int r = 0; r < world; r++) {
        runs[r] =
            (rank_run){cs, plan, rules, sh, r, &obs->ranks[r], false};
        if (pthread_create(&threads[r], NULL, rank_main, &runs[r]) != 0) {
            cg_threads_abort(sh, "could not start the thread of rank %d", r);
            cg_error(st, "could not start the thread of rank %d", r);
            rc = -1;
            break;
        }
        started++;
    }
    for (int r = 0; r < started; r++)
        pthread_join(threads[r], NULL);
    for (int r = 0; r < started && rc == 0; r++)
        if (runs[r].oom) {
            cg_error_infra(st, "rank %d ran out of memory", r);
            rc = -1;
        }
    cg_threads_free(sh);
    free(runs);
    free(threads);
    if (rc != 0)
        cg_observed_free(obs);
    return rc;
}

int cg_threads_run_rules(const cg_case *cs, const cg_oracle *plan, const cg_rules *rules,
                         cg_observed *obs, cg_status *st)
{
    return run_threads(cs, plan, rules, (cg_misorder){CG_MISORDER_NONE, 0}, obs, st);
}

const cg_emulation_runner cg_threads_runner = {"threads", run_threads};
