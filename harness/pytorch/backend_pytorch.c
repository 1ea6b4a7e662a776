/* backend_pytorch.c — a run with real PyTorch ranks (backend_pytorch.h):
 * per world size, export the cases, start W Python ranks, follow their
 * result lines, judge each job as soon as every rank has reported it, and
 * enforce the per-job deadline the way the MPI launcher does (launcher.c):
 * a job that passes it is recorded with where every rank was, the ranks are
 * killed, and new ones start at the next job, so one hung job costs one job. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backend_pytorch_internal.h"
#include "expect.h"
#include "ir_document.h"
#include "report_json.h"
#include "rules.h"
#include "runner.h"
#include "stop.h"
#include "terminal.h"

enum { STARTUP_LIMIT = 180 }; /* seconds W ranks may take to import torch and meet */

/* Each API (python/collgrad_torch/api_*.py) and the emulation that models it,
 * by family: the table of the version it names is found when a run starts. */
static const struct {
    const char *api, *emulation;
} apis[] = {
    {"nn", "torch-nn"},
    {"c10d", "c10d"},
    {"funcol", "torch-funcol"},
    {"gatherlayer", "gatherlayer"},
    {"diffdist", "diffdist"},
    {"rpc", "reference"},          /* dist_autograd's send/recv are exact */
    {"listassign", "gatherlayer"}, /* all_x[rank] = x keeps the own slot, as GatherLayer */
};

/* --backend jax:API (python/collgrad_jax/runner): shard_map with check_vma on
 * and off. No rule set models JAX: a wrong gradient is diagnosed against the
 * reference's exact rules and the four misordering hypotheses. */
static const char *const jax_apis[] = {"shard_map", "shard_map_novma"};

const char *cg_jax_api(int i)
{
    return i >= 0 && (size_t)i < sizeof jax_apis / sizeof jax_apis[0] ? jax_apis[i] : NULL;
}

bool cg_backend_is_jax(const char *backend) { return backend && strncmp(backend, "jax:", 4) == 0; }

static bool jax_api_known(const char *api)
{
    for (size_t i = 0; i < sizeof jax_apis / sizeof jax_apis[0]; i++)
        if (strcmp(api, jax_apis[i]) == 0)
            return true;
    return false;
}

const char *cg_pytorch_api(int i)
{
    return i >= 0 && (size_t)i < sizeof apis / sizeof apis[0] ? apis[i].api : NULL;
}

bool cg_pytorch_api_known(const char *api) { return cg_pt_emulation_of(api) != NULL; }

const char *cg_pt_emulation_of(const char *api)
{
    for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++)
        if (strcmp(api, apis[i].api) == 0) { /* by its table's name: the version it models */
            const cg_rules *r = cg_rules_find(apis[i].emulation);
            return r ? r->name : apis[i].emulation;
        }
    return NULL;
}

/* Kept in o->usage too: a refused command line still gets its report. */
static int usage(cg_options *o, const char *msg, const char *arg) __attribute__((format(printf, 2, 0)));
static int usage(cg_options *o, const char *msg, const char *arg)
{
    snprintf(o->usage, sizeof o->usage, msg, arg);
    fprintf(stderr, "collgrad-check: %s\nTry 'collgrad-check --help'.\n", o->usage);
    return CG_EXIT_USAGE;
}

int cg_pytorch_check_options(cg_options *o)
{
    if (!o->backend)
        return (o->torch_backend || o->python)
                   ? usage(o, "%s applies to --backend pytorch:API only", o->python ? "--python" : "--torch-backend")
                   : 0;
    bool torch = strncmp(o->backend, "pytorch:", 8) == 0 && cg_pytorch_api_known(o->backend + 8);
    if (!torch && !(cg_backend_is_jax(o->backend) && jax_api_known(o->backend + 4)))
        return usage(o,
                     "expected --backend pytorch:API with API nn, c10d, funcol, gatherlayer, "
                     "diffdist, rpc or listassign, or jax:shard_map or jax:shard_map_novma, got '%s'",
                     o->backend);
    if (!torch && o->torch_backend)
        return usage(o, "%s applies to --backend pytorch:API only", "--torch-backend");
    const char *clash = o->oracle_only ? "--oracle-only" : o->rules ? "--rules" : o->inject ? "--inject"
                      : o->check_sync ? "--check-sync" : o->device ? "--device"
                      : strcmp(o->transport, "mpi") != 0 ? "--transport" : NULL;
    if (clash)
        return usage(o, "%s does not apply to --backend: the framework's own ranks run the cases", clash);
    return 0;
}


/* ---- the run -------------------------------------------------------------------- */


static void progress(cg_pt_run *R, const cg_case_result *c)
{
    if (c->status == CG_ERROR && c->error_class > R->worst)
        R->worst = c->error_class;
    ++R->index;
    if (R->o->quiet)
        return;
    cg_term_case(stdout, c, R->index, R->total, R->o->verbose);
    if (c->status == CG_SKIP && c->message) /* the terminal shows errors' messages only */
        printf("        skipped: %s\n", c->message);
    fflush(stdout);
}

static cg_case_result *add_result(cg_pt_run *R, const cg_case *cs, int world)
{
    cg_case_result *c = cg_report_add_case(R->rep, cs->name, cs->file, cs->source, world);
    if (c)
        cg_case_set_rules(c, R->ctx.label);
    return c;
}

/* Every rank's first line arrived: say once what is being measured, and
 * put it into the report. */
void cg_pt_announce(cg_pt_run *R, const cg_pt_hello *h, int world)
{
    R->ctx.torch = h->torch ? h->torch : "?";
    R->ctx.backend = h->backend_name ? h->backend_name : R->o->torch_backend;
    if (R->announced)
        return;
    R->announced = true;
    char python[PATH_MAX + 700];
    snprintf(python, sizeof python, "%s (Python %s; %s)", h->python ? h->python : R->python,
             h->python_version ? h->python_version : "?", R->python_why);
    cg_framework fw = {R->ctx.jax ? "jax" : "pytorch", (char *)R->ctx.torch, (char *)R->ctx.api,
                       (char *)R->ctx.backend, python, R->isolation};
    cg_report_set_framework(R->rep, &fw);
    if (!R->o->quiet && R->ctx.jax) {
        printf("%s: jax %s, %s, W=%d host devices in one process of %s\n", R->ctx.label, R->ctx.torch,
               R->ctx.backend, world, python);
        fflush(stdout);
    } else if (!R->o->quiet) {
        printf("%s: torch %s, process group %s, W=%d ranks of %s\n        ranks on %s\n", R->ctx.label,
               R->ctx.torch, R->ctx.backend, world, python, R->isolation);
        if (h->api_unavailable)
            printf("        %s: every job is skipped: %s\n", R->ctx.label, h->api_unavailable);
        fflush(stdout);
    }
}

static double job_seconds(const cg_pt_job *job, int world)
{
    double s = 0;
    for (int r = 0; r < world; r++)
        if (job->ranks[r].seconds > s)
            s = job->ranks[r].seconds;
    return s;
}

void cg_pt_judge_job(cg_pt_run *R, cg_pt_job *job, int world)
{
    const cg_case *cs = R->set->cases[job->case_index];
    cg_case_result *c = add_result(R, cs, world);
    if (!c)
        return;
    c->error_class = cg_pt_judge(&R->ctx, cs, job, world, c);
    c->duration_s = job_seconds(job, world);
    if (job->ranks[0].ran) /* an annotation: out of memory leaves it out */
        c->ran = strdup(job->ranks[0].ran);
    progress(R, c);
}

static void record_error(cg_pt_run *R, const cg_pt_job *job, int world, const char *why, double seconds,
                         int error_class)
{
    cg_case_result *c = add_result(R, R->set->cases[job->case_index], world);
    if (!c)
        return;
    c->status = CG_ERROR;
    c->error_class = error_class;
    c->duration_s = seconds;
    c->message = strdup(why);
    cg_check_hazards(R->set->cases[job->case_index], job->plan, c);
    progress(R, c);
}

static void record_unrun(cg_pt_run *R, const cg_pt_job *job, int world)
{
    cg_case_result *c = add_result(R, R->set->cases[job->case_index], world);
    if (!c)
        return;
    char msg[64];
    snprintf(msg, sizeof msg, "not run: interrupted by signal %d", cg_stop_signal());
    c->status = CG_SKIP;
    c->message = strdup(msg);
    progress(R, c);
}

/* The jobs of world w: cases whose oracle runs (the others are judged as
 * the MPI worker judges them: a bad program, before any rank starts). */
static int plan_world(cg_pt_run *R, int w, cg_pt_job **out)
{
    cg_pt_job *jobs = calloc((size_t)R->set->n + 1, sizeof *jobs);
    int n = 0;
    for (int i = 0; jobs && i < R->set->n; i++) {
        const cg_case *cs = R->set->cases[i];
        int worlds[CG_MAX_WORLD], nw = cg_case_worlds(R->o, cs, worlds);
        bool at_w = false;
        for (int k = 0; k < nw; k++)
            at_w |= worlds[k] == w;
        if (!at_w)
            continue;
        cg_oracle *plan = cg_oracle_run(cs, w, false);
        if (!plan) {
            free(jobs);
            return -1;
        }
        if (plan->st.code != 0) {
            cg_case_result *c = add_result(R, cs, w);
            if (c) {
                cg_check_oracle(cs, plan, c);
                c->error_class = plan->st.code;
                progress(R, c);
            }
            cg_oracle_free(plan);
            continue;
        }
        jobs[n].case_index = i;
        jobs[n++].plan = plan;
    }
    *out = jobs;
    return jobs ? n : -1;
}

static int write_ir(cg_pt_run *R, const cg_pt_job *jobs, int n, int w, const char *path)
{
    cJSON *doc = cg_export_document(w);
    cJSON *cases = doc ? cJSON_GetObjectItemCaseSensitive(doc, "cases") : NULL;
    for (int i = 0; cases && i < n; i++) {
        cJSON *c = cg_export_case(R->set->cases[jobs[i].case_index], jobs[i].plan);
        if (!c || !cJSON_AddItemToArray(cases, c)) {
            cJSON_Delete(c);
            cases = NULL;
        }
    }
    char *text = cases ? cJSON_PrintUnformatted(doc) : NULL;
    cg_status st = CG_STATUS_OK;
    int rc = text ? cg_write_file_atomic(path, text, &st) : cg_error_infra(&st, "out of memory exporting the cases");
    if (rc != 0)
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
    cJSON_free(text);
    cJSON_Delete(doc);
    return rc;
}

static int run_world(cg_pt_run *R, int w)
{
    cg_pt_job *jobs = NULL;
    int n = plan_world(R, w, &jobs), rc = 0;
    if (n < 0)
        return -1;
    char ir[PATH_MAX + 32], store[PATH_MAX + 32];
    snprintf(ir, sizeof ir, "%s/ir-w%d.json", R->dir, w);
    if (n > 0 && write_ir(R, jobs, n, w, ir) != 0)
        rc = -1;
    int next = 0;
    for (; R->refused[0] && next < n; next++)
        record_error(R, &jobs[next], w, R->refused, 0.0, CG_EXIT_USAGE);
    for (int launch = 0; rc == 0 && next < n && !cg_stop_signal(); launch++) {
        snprintf(store, sizeof store, "%s/store-w%d-l%d", R->dir, w, launch);
        cg_pt_launch L = {.jax = R->ctx.jax, .world = w, .first_job = next, .python = R->python,
                          .package_dir = R->package, .api = R->ctx.api, .torch_backend = R->o->torch_backend,
                          .ir = ir, .store = store, .dir = R->dir, .launch = launch,
                          .collective_timeout = R->o->timeout / 2 > 1 ? R->o->timeout / 2 : 1,
                          .startup_timeout = STARTUP_LIMIT, .isolate = R->isolate};
        char why[3000] = "";
        double t0 = cg_now();
        cg_pt_launch_end end = cg_pt_follow_launch(R, &L, jobs, n, &next, why, sizeof why);
        if (end == CG_PT_LAUNCH_LOST_JOB && next < n && !cg_stop_signal()) {
            record_error(R, &jobs[next], w, why, cg_now() - t0, CG_EXIT_INFRA);
            next++;
        } else if (end == CG_PT_LAUNCH_FATAL || end == CG_PT_LAUNCH_REFUSED) {
            if (end == CG_PT_LAUNCH_REFUSED)
                snprintf(R->refused, sizeof R->refused, "%s", why);
            for (; next < n; next++) /* nothing will run: every job says why */
                record_error(R, &jobs[next], w, why, 0.0,
                             end == CG_PT_LAUNCH_REFUSED ? CG_EXIT_USAGE : CG_EXIT_INFRA);
        }
    }
    for (; next < n; next++)
        record_unrun(R, &jobs[next], w);
    for (int i = 0; i < n; i++) {
        for (int r = 0; r < w; r++)
            cg_pt_rank_free(&jobs[i].ranks[r]);
        cg_oracle_free(jobs[i].plan);
    }
    free(jobs);
    unlink(ir);
    return rc;
}

static int count_jobs(const cg_options *o, const cg_case_set *set)
{
    int n = 0, worlds[CG_MAX_WORLD];
    for (int i = 0; i < set->n; i++)
        n += cg_case_worlds(o, set->cases[i], worlds);
    return n;
}

/* The interpreter with torch (python, and why it was chosen) and the
 * collgrad_torch package: 0, or -1 with st saying which is missing. */
static int find_interpreter_and_package(const cg_options *o, char python[PATH_MAX], char why[600],
                                        char package[PATH_MAX], cg_status *st)
{
    if (cg_pt_find_python(o->python, cg_backend_is_jax(o->backend), python, PATH_MAX, why, 600) != 0)
        return cg_error_infra(st, "%s", why);
    if (cg_pt_package_dir(package, PATH_MAX) != 0)
        return cg_error_infra(st, "cannot find the collgrad_torch package (looked beside the executable and in %s)",
                              CG_PYTHON_DIR);
    return 0;
}

int cg_pytorch_preflight(const cg_options *o, cg_status *st)
{
    char python[PATH_MAX], why[600], package[PATH_MAX];
    return find_interpreter_and_package(o, python, why, package, st) ? CG_EXIT_INFRA : 0;
}

int cg_run_pytorch(const cg_options *o, const cg_case_set *set, cg_report *rep)
{
    cg_pt_run R = {.o = o, .set = set, .rep = rep};
    R.ctx.jax = cg_backend_is_jax(o->backend);
    R.ctx.api = o->backend + (R.ctx.jax ? 4 : 8);
    R.ctx.label = o->backend;
    R.ctx.emulation = R.ctx.jax ? "reference" : cg_pt_emulation_of(R.ctx.api);
    R.ctx.torch = "?";
    R.ctx.backend = o->torch_backend ? o->torch_backend : R.ctx.jax ? "cpu" : "gloo";
    R.ctx.fd = !o->no_fd;
    R.ctx.diagnose = !o->no_diagnosis;
    cg_options with_backend = *o;
    with_backend.torch_backend = R.ctx.backend;
    R.o = &with_backend;
    cg_status st = CG_STATUS_OK;
    if (find_interpreter_and_package(o, R.python, R.python_why, R.package, &st) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        return CG_EXIT_INFRA;
    }
    R.isolate = cg_pt_can_isolate(R.isolation, sizeof R.isolation);
    const char *tmp = getenv("TMPDIR");
    snprintf(R.dir, sizeof R.dir, "%s/collgrad-torch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(R.dir)) {
        fprintf(stderr, "collgrad-check: cannot create a temporary directory in %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return CG_EXIT_INFRA;
    }
    R.total = count_jobs(o, set);
    int rc = 0;
    for (int w = 1; w <= CG_MAX_WORLD && rc == 0; w++)
        if (run_world(&R, w) != 0) {
            fprintf(stderr, "collgrad-check: cannot run the W=%d ranks\n", w);
            rc = CG_EXIT_INFRA;
        }
    if (rmdir(R.dir) != 0)
        fprintf(stderr, "collgrad-check: %s left behind: %s\n", R.dir, strerror(errno));
    cg_report_count(rep);
    if (rc == 0)
        rc = cg_exit_status(rep, R.worst);
    if (cg_stop_signal() && rc < CG_EXIT_INFRA)
        rc = CG_EXIT_INFRA;
    return rc;
}
