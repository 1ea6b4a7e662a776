/* run_oracle.c — the oracle-only mode: every job checked against its
 * expectations and the finite differences, in this process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cancel.h"
#include "expect.h"
#include "judge.h"
#include "junit.h"
#include "oracle.h"
#include "report_json.h"
#include "runner.h"
#include "stop.h"
#include "terminal.h"

double cg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cg_case_worlds(const cg_options *o, const cg_case *cs, int *worlds)
{
    if (o->world == 0) {
        for (int i = 0; i < cs->nworlds; i++)
            worlds[i] = cs->worlds[i];
        return cs->nworlds;
    }
    for (int i = 0; i < cs->nworlds; i++)
        if (cs->worlds[i] == o->world) {
            worlds[0] = o->world;
            return 1;
        }
    return 0;
}

int cg_exit_status(const cg_report *rep, int worst_error_class)
{
    int worst = worst_error_class;
    bool failed = false;
    for (int i = 0; i < rep->ncases; i++) {
        const cg_case_result *c = &rep->cases[i];
        failed |= c->status == CG_FAIL;
        if (c->status == CG_ERROR) {
            int cls = c->error_class == CG_EXIT_INFRA ? CG_EXIT_INFRA : CG_EXIT_USAGE;
            worst = cls > worst ? cls : worst;
        }
    }
    if (worst)
        return worst;
    return failed || rep->failed ? CG_EXIT_FAIL : CG_EXIT_OK;
}

int cg_write_reports(const cg_options *o, const cg_report *rep, int rc)
{
    cg_status st = CG_STATUS_OK;
    if (o->json && cg_report_write_json(rep, o->json, &st) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        rc = CG_EXIT_INFRA;
    }
    if (o->junit && cg_report_write_junit(rep, o->junit, &st) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        rc = CG_EXIT_INFRA;
    }
    return rc;
}

int cg_report_load_errors(cg_report *rep, const cg_case_set *set)
{
    for (int i = 0; i < set->nbad; i++) {
        const char *file = set->bad[i].file, *slash = strrchr(file, '/');
        char name[256];
        snprintf(name, sizeof name, "%s", slash ? slash + 1 : file);
        char *dot = strstr(name, ".case");
        if (dot && dot[5] == '\0')
            *dot = '\0';
        cg_case_result *c = cg_report_add_case(rep, name, file, NULL, 0);
        if (!c || !(c->message = strdup(set->bad[i].message)))
            return -1;
        c->status = CG_ERROR;
        c->error_class = CG_EXIT_USAGE;
    }
    cg_report_count(rep);
    return 0;
}

static int total_jobs(const cg_options *o, const cg_case_set *set)
{
    int n = 0, worlds[CG_MAX_WORLD];
    for (int i = 0; i < set->n; i++) {
        int k = cg_case_worlds(o, set->cases[i], worlds);
        n += k ? k : 1; /* a case with no matching world shows as skipped */
    }
    return n;
}

int cg_run_oracle_only(const cg_options *o, const cg_case_set *set, cg_report *rep)
{
    int total = total_jobs(o, set), index = 0, worst = 0;
    for (int i = 0; i < set->n && !cg_stop_signal(); i++) { /* a signal ends it between jobs */
        const cg_case *cs = set->cases[i];
        int worlds[CG_MAX_WORLD], nw = cg_case_worlds(o, cs, worlds);
        if (nw == 0) {
            cg_case_result *res = cg_report_add_case(rep, cs->name, cs->file, cs->source, o->world);
            if (!res)
                return CG_EXIT_INFRA;
            res->status = CG_SKIP;
            res->message = strdup("world size not listed by the case");
            cg_term_case(stdout, res, ++index, total, o->verbose);
            continue;
        }
        for (int w = 0; w < nw && !cg_stop_signal(); w++) {
            double t0 = cg_now();
            /* the job's limit, as in a distributed run */
            cg_oracle *orc = cg_oracle_run_within(cs, worlds[w], !o->no_fd, o->timeout);
            cg_case_result *res = cg_report_add_case(rep, cs->name, cs->file, cs->source, worlds[w]);
            if (!orc || !res) {
                cg_oracle_free(orc);
                fprintf(stderr, "collgrad-check: out of memory\n");
                return CG_EXIT_INFRA;
            }
            /* the oracle alone: its own finite differences, no observed run */
            cg_judge_job j = {cs, orc, NULL, {NULL, false, cg_case_tol(cs, cg_tol_for(cs->dtype)), NULL}, false,
                              false, NULL, NULL, NULL};
            int cls = cg_judge(&j, res);
            cg_case_finish(res);
            if (res->status == CG_ERROR && cls > worst)
                worst = cls;
            res->duration_s = cg_now() - t0;
            cg_oracle_free(orc);
            cg_term_case(stdout, res, ++index, total, o->verbose);
        }
    }
    cg_report_count(rep);
    if (cg_stop_signal()) {
        fprintf(stderr, "collgrad-check: interrupted by signal %d after %d of %d jobs\n", cg_stop_signal(),
                index, total);
        return CG_EXIT_INFRA;
    }
    return cg_exit_status(rep, worst);
}
