/* main.c — collgrad-check: load the cases, run them in the chosen mode
 * (oracle only; as one rank inside mpiexec; or launching mpiexec per world
 * size), write the reports, exit with the contract's status (cli.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_pytorch.h"
#include "bench.h"
#include "case_set.h"
#include "cli.h"
#include "compare.h"
#include "matrix_run.h"
#include "device.h"
#include "explain.h"
#include "explore.h"
#include "export_ir.h"
#include "injection.h"
#include "junit.h"
#include "launch_env.h"
#include "launcher.h"
#include "list.h"
#include "plugin_check.h"
#include "plugin.h"
#include "preflight.h"
#include "rules.h"
#include "report_json.h"
#include "runner.h"
#include "stop.h"
#include "terminal.h"
#include "worker.h"

/* The table name of a --rules plugin (what a case's rules=NAME calls it);
 * NULL without one or when it does not load (preflight then says why). */
static const char *plugin_rules_name(const cg_options *o)
{
    const cg_rules *r = o->rules && cg_is_plugin_path(o->rules) ? cg_rules_load(o->rules, NULL) : NULL;
    return r ? r->name : NULL;
}

/* The report of a run in the mode the options choose; NULL on OOM. */
static cg_report *new_report(const cg_options *o)
{
    if (o->oracle_only)
        return cg_report_new("oracle-only", NULL, NULL, "cpu");
    if (o->backend) /* the framework is recorded by backend_pytorch.c */
        return cg_report_new("distributed", o->torch_backend ? o->torch_backend : "gloo", o->backend, "cpu");
    return cg_report_new("distributed", o->transport, o->rules ? o->rules : "reference",
                         cg_device_name(cg_device_of(o)));
}

/* A selection refused before anything ran: say why, and still leave the
 * reports asked for (the files that did not load, and the refusal as an
 * errored test named "refused"), so a stale report from an earlier run
 * never stands in for this one. Returns rc (3 if a report fails). */
static int refuse(const cg_options *o, const cg_case_set *set, const char *why, bool said, int rc)
{
    if (why && !said)
        fprintf(stderr, "collgrad-check: %s\n", why);
    if ((!o->json && !o->junit) || o->worker || o->list || o->explain)
        return rc;
    cg_report *rep = new_report(o);
    cg_case_result *c = rep && cg_report_load_errors(rep, set) == 0 && why
                            ? cg_report_add_case(rep, "refused", NULL, NULL, 0) : NULL;
    if (c) {
        c->status = CG_ERROR;
        c->error_class = rc == CG_EXIT_INFRA ? CG_EXIT_INFRA : CG_EXIT_USAGE;
        c->message = strdup(why);
        cg_report_count(rep);
    }
    rc = rep ? cg_write_reports(o, rep, rc) : CG_EXIT_INFRA;
    cg_report_free(rep);
    return rc;
}

/* The run proper, --repeat N times at most: a round that does not pass
 * ends it (ctest's until-fail), and its report is the one written. */
static int run_rounds(const cg_options *o, const cg_case_set *set)
{
    int rc = 0;
    for (int round = 1; round <= o->repeat; round++) {
        cg_report *rep = new_report(o);
        if (!rep) {
            fprintf(stderr, "collgrad-check: out of memory\n");
            return CG_EXIT_INFRA;
        }
        double t0 = cg_now();
        if (cg_report_load_errors(rep, set) != 0)
            rc = CG_EXIT_INFRA;
        else if (set->n == 0)
            rc = cg_exit_status(rep, 0);
        else
            rc = o->oracle_only ? cg_run_oracle_only(o, set, rep)
               : o->backend     ? cg_run_pytorch(o, set, rep)
                                : cg_run_launcher(o, set, rep);
        cg_term_summary(stdout, rep, cg_now() - t0);
        rc = cg_injection_verdict(o, rep, rc); /* a self-test that injected nothing fails */
        bool last = rc != 0 || round == o->repeat || cg_stop_signal();
        if (o->repeat > 1)
            printf("round %d of %d: %s\n", round, o->repeat, rc ? "did not pass, stopping" : "passed");
        if (last)
            rc = cg_write_reports(o, rep, rc);
        cg_report_free(rep);
        if (last)
            break;
    }
    return rc;
}

/* Load, check and filter the selection. 0; 2 with the bad files kept in
 * set->bad (the run goes on and reports them) or st set (refused); 3. */
static int select_cases(const cg_options *o, cg_case_set *set, cg_status *st)
{
    if (o->worker &&
        o->bundle_file) { /* a launcher's rank gets its set over MPI (bundle_share.h) */
        memset(set, 0, sizeof *set);
        return 0;
    }
    int rc = cg_case_set_load(set, o->paths, o->npaths, &o->limits);
    if (rc == CG_EXIT_INFRA)
        return rc;
    int rules_rc = cg_case_set_check_rules(set, plugin_rules_name(o));
    if (rules_rc > rc)
        rc = rules_rc;
    if (rc != CG_EXIT_INFRA && cg_case_set_filter(set, o->include, o->exclude, st) != 0)
        return CG_EXIT_USAGE;
    if (rc == 0 && set->n == 0)
        cg_error(st, "no case files found");
    return rc == 0 && set->n == 0 ? CG_EXIT_USAGE : rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "compare") == 0) /* a subcommand: no cases, no MPI */
        return cg_compare_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "export-ir") == 0) /* the IR as JSON (export_ir.h) */
        return cg_export_ir_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "explore") == 0) /* random programs (explore.h) */
        return cg_explore_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "bench") == 0) /* nccl-tests for gradients (bench.h) */
        return cg_bench_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "matrix") == 0) /* case x backend (matrix_run.h) */
        return cg_matrix_main(argc - 1, argv + 1);
    cg_options o;
    int rc = cg_parse_options(argc, argv, &o);
    if (rc < 0 && (rc = cg_pytorch_check_options(&o)) == 0)
        rc = -1;
    char terr[1024] = "";
    cg_status st = CG_STATUS_OK;
    if (rc == CG_EXIT_USAGE && o.usage[0] && (o.json || o.junit) && !o.worker &&
        cg_report_targets_prepare(o.json, o.junit, &st) == 0) {
        cg_case_set none = {0}; /* a bad command line is refused with the report it asked for */
        rc = refuse(&o, &none, o.usage, true, rc);
    }
    if (rc >= 0) {
        free(o.paths);
        return rc;
    }
    /* a built-in rule set by its table's name, version included, from here on:
     * "--rules torch-nn" runs and reports as torch-nn@1.13 */
    const cg_rules *named = o.rules && !cg_is_plugin_path(o.rules) ? cg_rules_find(o.rules) : NULL;
    if (named)
        o.rules = named->name;
    if (!o.worker) { /* rank variables are believed only with a launcher behind them */
        cg_launch_env env = cg_launch_env_detect(terr, sizeof terr);
        if (env == CG_LAUNCH_SRUN_NO_MPI) {
            fprintf(stderr, "collgrad-check: %s\n", terr);
            free(o.paths);
            return CG_EXIT_INFRA;
        }
        if (env == CG_LAUNCH_STRAY)
            fprintf(stderr, "collgrad-check: warning: %s\n", terr);
    }
    /* a report target that cannot be written is refused before any run */
    if (cg_report_targets_prepare(o.json, o.junit, &st) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        free(o.paths);
        return CG_EXIT_USAGE;
    }
    if (!o.worker && !cg_launched_by_mpi())
        cg_stop_install(); /* a signal ends the run between jobs, report written */
    cg_case_set set;
    st = CG_STATUS_OK;
    rc = select_cases(&o, &set, &st);
    snprintf(terr, sizeof terr, "%s", st.msg);
    /* files that did not parse are errored tests of a run that goes on */
    bool run_anyway = rc == CG_EXIT_USAGE && set.nbad > 0 && !terr[0] && !o.list && !o.explain;
    if ((rc == 0 || run_anyway) && !o.list && !o.worker && !cg_launched_by_mpi() &&
        cg_preflight_selection(&o, &set, 0, &st) != 0) {
        snprintf(terr, sizeof terr, "%s", st.msg);
        rc = CG_EXIT_USAGE;
        run_anyway = false;
    }
    if (o.list && rc != CG_EXIT_INFRA && !terr[0]) {
        rc = cg_list_selection(&o, &set); /* the bad files are part of what it lists */
    } else if ((rc != 0 && !run_anyway) || o.explain) {
        if (rc == 0)
            rc = cg_explain(&o, &set);
        else
            rc = terr[0] ? refuse(&o, &set, terr, false, rc) /* the loader printed its own */
                         : refuse(&o, &set, set.refusal[0] ? set.refusal : NULL, true, rc);
    } else if (!o.oracle_only && !o.backend && (o.worker || cg_launched_by_mpi())) {
        rc = cg_worker_main(&o, &set); /* inside mpiexec: this process is one rank */
    } else {
        int pre = o.oracle_only || o.backend ? 0 : cg_device_precheck(&o, &st);
        if (pre == 0) /* the names the run needs, before anything launches */
            pre = cg_preflight_names(&o, &st);
        if (pre == 0 && !o.oracle_only && !o.backend && cg_transport_precheck(o.transport, &st) != 0)
            pre = CG_EXIT_INFRA;
        /* said once, not once per job's ranks */
        rc = pre != 0 ? refuse(&o, &set, st.msg, false, pre) : run_rounds(&o, &set);
    }
    cg_case_set_free(&set);
    free(o.paths);
    return rc;
}
