/* main.c — collgrad-check: load the cases, run them in the chosen mode
 * (oracle only; as one rank inside mpiexec; or launching mpiexec per world
 * size), write the reports, exit with the contract's status (cli.h). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_pytorch.h"
#include "bench.h"
#include "case_set.h"
#include "cli.h"
#include "compare.h"
#include "device.h"
#include "explain.h"
#include "export_ir.h"
#include "injection.h"
#include "junit.h"
#include "launch_env.h"
#include "launcher.h"
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
    char err[512];
    const cg_rules *r = o->rules && cg_is_plugin_path(o->rules) ? cg_rules_load(o->rules, err, sizeof err) : NULL;
    return r ? r->name : NULL;
}

static void list_cases(const cg_options *o, const cg_case_set *set)
{
    for (int i = 0; i < set->n; i++) {
        const cg_case *cs = set->cases[i];
        int worlds[CG_MAX_WORLD], nw = cg_case_worlds(o, cs, worlds);
        printf("%-40s W=", cs->name);
        for (int w = 0; w < nw; w++)
            printf("%s%d", w ? "," : "", worlds[w]);
        printf("  %s\n", cs->file);
    }
    printf("%d cases\n", set->n);
}

/* Tensors of the same sizes are allocated and freed over and over (every
 * job, every backward pass). Served by mmap, each one's pages would fault in
 * afresh on first touch, which costs more than the collective itself for a
 * large all_reduce; from the heap, freed memory is reused as it is. The heap
 * is trimmed where a phase ends (bench_rank.c) rather than on every free. */
static void keep_freed_memory(void)
{
    /* a speed-up only: allocators that refuse it (the sanitizers') change nothing else */
    (void)mallopt(M_MMAP_MAX, 0);
    (void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int main(int argc, char **argv)
{
    keep_freed_memory();
    if (argc > 1 && strcmp(argv[1], "compare") == 0) /* a subcommand: no cases, no MPI */
        return cg_compare_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "export-ir") == 0) /* the IR as JSON (export_ir.h) */
        return cg_export_ir_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "bench") == 0) /* nccl-tests for gradients (bench.h) */
        return cg_bench_main(argc - 1, argv + 1);
    cg_options o;
    int rc = cg_parse_options(argc, argv, &o);
    if (rc < 0 && (rc = cg_pytorch_check_options(&o)) == 0)
        rc = -1;
    if (rc >= 0) {
        free(o.paths);
        return rc;
    }
    char terr[1024];
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
    if (cg_report_targets_prepare(o.json, o.junit, terr, sizeof terr) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", terr);
        free(o.paths);
        return CG_EXIT_USAGE;
    }
    if (!o.worker && !cg_launched_by_mpi())
        cg_stop_install(); /* a signal ends the run between jobs, report written */
    cg_case_set set;
    rc = o.case_list ? cg_case_set_load_list(&set, o.case_list, &o.limits)
                       : cg_case_set_load(&set, o.paths, o.npaths, &o.limits);
    if ((rc == 0 || rc == CG_EXIT_USAGE) && !o.case_list) { /* the ranks' set was checked by the launcher */
        int rules_rc = cg_case_set_check_rules(&set, plugin_rules_name(&o));
        if (rules_rc > rc)
            rc = rules_rc;
    }
    if (rc == 0 && set.n == 0) {
        fprintf(stderr, "collgrad-check: no case files found\n");
        rc = CG_EXIT_USAGE;
    }
    /* files that did not parse are errored tests of a run that goes on */
    bool run_anyway = rc == CG_EXIT_USAGE && set.nbad > 0 && !o.list && !o.explain;
    if ((rc == 0 || run_anyway) && !o.list && !o.worker && !cg_launched_by_mpi() &&
        cg_preflight_selection(&o, &set, 0, terr, sizeof terr) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", terr);
        rc = CG_EXIT_USAGE;
        run_anyway = false;
    }
    if ((rc != 0 && !run_anyway) || o.list || o.explain) {
        if (rc == 0 && o.explain)
            rc = cg_explain(&o, &set);
        else if (rc == 0)
            list_cases(&o, &set);
        cg_case_set_free(&set);
        free(o.paths);
        return rc;
    }
    if (!o.oracle_only && !o.backend && (o.worker || cg_launched_by_mpi())) {
        rc = cg_worker_main(&o, &set); /* inside mpiexec: this process is one rank */
        cg_case_set_free(&set);
        free(o.paths);
        return rc;
    }
    char perr[1024];
    int pre = o.oracle_only || o.backend ? 0 : cg_device_precheck(&o, perr, sizeof perr);
    if (pre == 0) /* the names the run needs, before anything launches */
        pre = cg_preflight_names(&o, perr, sizeof perr);
    if (pre == 0 && !o.oracle_only && !o.backend && cg_transport_precheck(o.transport, perr, sizeof perr) != 0)
        pre = CG_EXIT_INFRA;
    if (pre != 0) {
        fprintf(stderr, "collgrad-check: %s\n", perr); /* once, not once per job's ranks */
        cg_case_set_free(&set);
        free(o.paths);
        return pre;
    }
    cg_report *rep = o.oracle_only ? cg_report_new("oracle-only", NULL, NULL, "cpu")
                   : o.backend ? cg_report_new("distributed", o.torch_backend ? o.torch_backend : "gloo",
                                               o.backend, "cpu") /* framework: backend_pytorch.c */
                               : cg_report_new("distributed", o.transport,
                                               o.rules ? o.rules : "reference",
                                               cg_device_name(cg_device_of(&o)));
    if (!rep) {
        fprintf(stderr, "collgrad-check: out of memory\n");
        rc = CG_EXIT_INFRA;
    } else {
        double t0 = cg_now();
        if (cg_report_load_errors(rep, &set) != 0)
            rc = CG_EXIT_INFRA;
        else if (set.n == 0)
            rc = cg_exit_status(rep, 0);
        else
            rc = o.oracle_only ? cg_run_oracle_only(&o, &set, rep)
               : o.backend     ? cg_run_pytorch(&o, &set, rep)
                               : cg_run_launcher(&o, &set, rep);
        cg_term_summary(stdout, rep, cg_now() - t0);
        rc = cg_injection_verdict(&o, rep, rc); /* a self-test that injected nothing fails */
        char err[1024];
        if (o.json && cg_report_write_json(rep, o.json, err, sizeof err) != 0) {
            fprintf(stderr, "collgrad-check: %s\n", err);
            rc = CG_EXIT_INFRA;
        }
        if (o.junit && cg_report_write_junit(rep, o.junit, err, sizeof err) != 0) {
            fprintf(stderr, "collgrad-check: %s\n", err);
            rc = CG_EXIT_INFRA;
        }
    }
    cg_report_free(rep);
    cg_case_set_free(&set);
    free(o.paths);
    return rc;
}
