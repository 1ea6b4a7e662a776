/* worker.c — one MPI process of a distributed run: for each job, run the
 * case's program on this rank through the rule set and the transport, then
 * ship the named tensors' values and gradients to rank 0, which diffs them
 * with the oracle.
 *
 * Results travel over plain MPI on MPI_COMM_WORLD, never over the transport
 * under test: a broken transport must not be able to corrupt its own verdict. */
#include "check_sync.h"
#include "worker.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "expect.h"
#include "interp.h"
#include "plan_share.h"
#include "rank_run.h"
#include "threads_run.h"

enum { RESULT_TAG = 32767 };

/* ---- packing a rank's bindings ------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
    bool oom;
} buf;

static void put(buf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = (b->n + n) * 2 + 256;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_i64(buf *b, int64_t v) { put(b, &v, sizeof v); }

static void put_str(buf *b, const char *s)
{
    int64_t n = s ? (int64_t)strlen(s) : -1;
    put_i64(b, n);
    if (s)
        put(b, s, (size_t)n);
}

/* t must be in host memory (pack_rank downloads device tensors first). */
static void put_values(buf *b, const cg_tensor *t, int64_t numel)
{
    for (int64_t i = 0; i < numel; i++) {
        double v = t ? cg_get(t, i) : 0.0;
        put(b, &v, sizeof v);
    }
}

/* The named tensors' values and gradients in host memory: on a CUDA graph
 * this is where they are read back, the run's only download. NULL with the
 * graph's error when a copy fails. */
static const cg_tensor **host_views(cg_graph *g, const cg_binding *bind, int n)
{
    const cg_tensor **v = cg_alloc(g, (size_t)(2 * n + 1) * sizeof *v);
    for (int i = 0; v && i < n; i++) {
        v[2 * i] = cg_tensor_host(g, bind[i].t);
        v[2 * i + 1] = bind[i].t->grad ? cg_tensor_host(g, bind[i].t->grad) : NULL;
        if (!v[2 * i] || (bind[i].t->grad && !v[2 * i + 1]))
            return NULL;
    }
    return v;
}

/* [error][n][name ndim shape[4] value[numel] grad[numel]]... */
static void pack_rank(buf *b, cg_graph *g, const cg_interp *I, const char *error, int error_class)
{
    const cg_binding *bind = NULL;
    int n = I ? cg_interp_bindings(I, 0, &bind) : 0;
    const cg_tensor **host = n > 0 ? host_views(g, bind, n) : NULL;
    if (n > 0 && !host) {
        put_str(b, cg_graph_status(g)->msg); /* reading the results back failed: say why */
        put_i64(b, CG_EXIT_INFRA);
        put_i64(b, 0);
        return;
    }
    put_str(b, error);
    put_i64(b, error ? error_class : 0);
    put_i64(b, n);
    for (int i = 0; i < n; i++) {
        const cg_tensor *t = host[2 * i];
        put_str(b, bind[i].name);
        put_i64(b, t->ndim);
        for (int d = 0; d < CG_MAX_DIMS; d++)
            put_i64(b, t->shape[d]);
        put_values(b, t, t->numel);
        put_values(b, host[2 * i + 1], t->numel);
    }
}

typedef struct reader {
    const char *p;
    size_t n, at;
    bool bad;
} reader;

static void get(reader *r, void *dst, size_t n)
{
    if (r->bad || r->at + n > r->n) {
        r->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->at, n);
    r->at += n;
}

static int64_t get_i64(reader *r)
{
    int64_t v;
    get(r, &v, sizeof v);
    return v;
}

static char *get_str(reader *r)
{
    int64_t n = get_i64(r);
    if (n < 0 || r->bad || (size_t)n > r->n - r->at)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s) {
        get(r, s, (size_t)n);
        s[n] = '\0';
    }
    return s;
}

static double *get_values(reader *r, int64_t n)
{
    if (n < 0 || (size_t)n > (r->n - r->at) / sizeof(double)) {
        r->bad = true;
        return NULL;
    }
    double *v = malloc(((size_t)n + 1) * sizeof *v);
    if (v)
        get(r, v, (size_t)n * sizeof *v);
    return v;
}

static int unpack_rank(const char *p, size_t n, cg_obs_rank *rk)
{
    reader r = {p, n, 0, false};
    rk->error = get_str(&r);
    rk->error_class = (int)get_i64(&r);
    int64_t count = get_i64(&r);
    if (r.bad || count < 0 || count > 1000000)
        return -1;
    rk->tensors = calloc((size_t)count + 1, sizeof *rk->tensors);
    if (!rk->tensors)
        return -1;
    for (int64_t i = 0; i < count && !r.bad; i++) {
        cg_obs_tensor *t = &rk->tensors[rk->ntensors++];
        t->name = get_str(&r);
        t->ndim = (int)get_i64(&r);
        t->numel = 1;
        for (int d = 0; d < CG_MAX_DIMS; d++) {
            t->shape[d] = get_i64(&r);
            if (d < t->ndim)
                t->numel *= t->shape[d];
        }
        t->value = get_values(&r, t->numel);
        t->grad = get_values(&r, t->numel);
        if (!t->name || !t->value || !t->grad)
            r.bad = true;
    }
    return r.bad ? -1 : 0;
}

/* ---- one job on this rank ------------------------------------------------ */

/* Run the program on this rank, its tensors on `dev`; pack what it produced
 * into b. */
static void run_rank(const cg_case *cs, const cg_rules *rules, cg_tp *tp, const cg_oracle *plan,
                     cg_device dev, buf *b)
{
    cg_rank_run r;
    int failed = cg_rank_run_program(&r, cs, rules, tp, plan->events, plan->nevents,
                                     dev == CG_DEVICE_CUDA, NULL, NULL);
    /* sends the transport held back go out before the results leave */
    int settled = cg_tp_settle(tp);
    /* --check-sync: a rank that ended while another waits in a collective is a desync there.
     * Every rank takes part, its program failed, or never started, or not: the check is a
     * collective of the world */
    int ended = cg_check_sync_end(tp);
    if (!r.I)
        pack_rank(b, r.g, NULL, r.st.msg, CG_EXIT_INFRA);
    else if (failed)
        pack_rank(b, r.g, r.I, cg_interp_status(r.I)->msg, cg_interp_status(r.I)->code);
    else if (settled != 0)
        pack_rank(b, r.g, r.I, tp->st.msg, CG_EXIT_INFRA);
    else if (ended != 0)
        pack_rank(b, r.g, r.I, tp->st.msg, tp->st.code);
    else
        pack_rank(b, r.g, r.I, NULL, 0);
    cg_rank_run_end(&r);
}

/* Rank 0 collects every rank's packed result in rank order. */
static int gather_observed(const buf *mine, int world, cg_observed *obs, cg_status *st)
{
    obs->world = world;
    for (int r = 0; r < world; r++) {
        char *p = mine->p;
        size_t n = mine->n;
        if (r > 0) {
            MPI_Status probe;
            int count;
            if (MPI_Probe(r, RESULT_TAG, MPI_COMM_WORLD, &probe) != MPI_SUCCESS ||
                MPI_Get_count(&probe, MPI_BYTE, &count) != MPI_SUCCESS ||
                !(p = malloc((size_t)count + 1)) ||
                MPI_Recv(p, count, MPI_BYTE, r, RESULT_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
                    MPI_SUCCESS) {
                return cg_error_infra(st, "collecting rank %d's results over MPI failed", r);
            }
            n = (size_t)count;
        }
        int rc = unpack_rank(p, n, &obs->ranks[r]);
        if (r > 0)
            free(p);
        if (rc != 0) {
            return cg_error_infra(st, "rank %d's results are corrupt", r);
        }
    }
    return 0;
}

/* Run the program under `rules` on every rank and collect it on rank 0.
 * 0; 1 on rank 0 when a rank's results could not be collected (st set);
 * -1 on a local failure. */
static int run_and_gather(const cg_case *cs, const cg_rules *rules, cg_tp *tp,
                          const cg_oracle *plan, cg_device dev, cg_observed *obs, cg_status *st)
{
    buf b = {0};
    run_rank(cs, rules, tp, plan, dev, &b);
    int rc = b.oom ? -1 : 0;
    if (tp->rank != 0 && rc == 0 &&
        MPI_Send(b.p, (int)b.n, MPI_BYTE, 0, RESULT_TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
        rc = -1;
    if (tp->rank == 0 && rc == 0 && gather_observed(&b, tp->world, obs, st) != 0)
        rc = 1;
    free(b.p);
    return rc;
}

/* A rank that ran out of memory (or was stopped) did not compute anything
 * to judge: the job is an infrastructure error naming the rank and case.
 * true when res was set so. */
static bool infra_error(const cg_case *cs, const cg_observed *obs, cg_case_result *res)
{
    for (int r = 0; r < obs->world; r++) {
        const cg_obs_rank *rk = &obs->ranks[r];
        if (!rk->error || rk->error_class != CG_EXIT_INFRA)
            continue;
        char msg[1024];
        snprintf(msg, sizeof msg, "%s on rank %d in case %s: %s",
                 strstr(rk->error, "out of memory") ? "out of memory" : "stopped", r, cs->name, rk->error);
        res->status = CG_ERROR;
        res->error_class = CG_EXIT_INFRA;
        res->message = strdup(msg);
        return true;
    }
    return false;
}

int cg_worker_job(const cg_case *cs, const cg_job *job, cg_tp *tp, cg_device dev,
                  bool fd, bool diagnose, cg_case_result *res, int *error_class)
{
    cg_status st = CG_STATUS_OK;
    const cg_rules *rules = cg_rules_load(job->rules, &st);
    *error_class = 0;
    if (!rules) {
        /* every rank sees the same: no communication happens */
        if (res) {
            res->status = CG_ERROR;
            res->message = strdup(st.msg);
            res->error_class = CG_EXIT_USAGE;
        }
        *error_class = CG_EXIT_USAGE;
        return 0;
    }
    bool root = tp->rank == 0;
    /* Rank 0 runs the oracle and shares its plan; only rank 0 pays for the
     * finite differences, in a second oracle run after the job. */
    cg_oracle *o = cg_plan_share(cs, tp->rank, tp->world);
    if (!o)
        return -1;
    if (o->st.code != 0) { /* a bad program: identical on every rank, nothing to run */
        if (root) {
            cg_check_oracle(cs, o, res);
            *error_class = res->status == CG_ERROR ? o->st.code : 0;
            res->error_class = *error_class;
        }
        cg_oracle_free(o);
        return 0;
    }
    cg_observed obs;
    memset(&obs, 0, sizeof obs);
    cg_status gathered = CG_STATUS_OK;
    int rc = run_and_gather(cs, rules, tp, o, dev, &obs, &gathered);
    /* rank 0 judges; the emulations' runs a diagnosis compares with are made
     * on threads in its process (threads_run.h: references, on the host
     * whatever the run under test used, and an emulation that raises on one
     * rank only ends there instead of leaving the others waiting in MPI) */
    cg_judge_job j = {cs, o, &obs, {job->rules, job->expect_only, cg_case_tol(cs, cg_tol_for(cs->dtype)), rules->name},
                      fd, diagnose, &cg_threads_runner, NULL, job->rules};
    if (root && rc == 1) {
        res->status = CG_ERROR;
        res->message = strdup(gathered.msg);
        res->error_class = *error_class = CG_EXIT_INFRA;
    } else if (root && rc == 0 && infra_error(cs, &obs, res)) {
        *error_class = CG_EXIT_INFRA; /* a rank out of memory or stopped: not a gradient to judge */
    } else if (root && rc == 0) {
        int cls = cg_judge(&j, res);
        if (cls)
            *error_class = cls;
    }
    cg_observed_free(&obs);
    rc = rc < 0 ? -1 : 0;
    cg_oracle_free(o);
    return rc;
}
