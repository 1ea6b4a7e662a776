/* worker_main.c — the MPI entry point of a distributed run (worker.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board.h"
#include "expect.h"
#include "injection.h"
#include "junit.h"
#include "report_json.h"
#include "runner.h"
#include "terminal.h"
#include "transport_fault.h"
#include "worker.h"
#include "launch_env.h"
#include "preflight.h"
#include "process_fault.h"
#include "bundle_share.h"
#include "check_sync.h"

bool cg_launched_by_mpi(void)
{
    char why[512];
    return cg_launch_env_detect(why, sizeof why) == CG_LAUNCH_RANK; /* launch_env.h says how */
}

/* Direct mode: a rank past its deadline says where it is and ends the job. */
static void on_deadline(int sig)
{
    (void)sig;
    static const char msg[] = "collgrad-check: job deadline exceeded (see --timeout); aborting\n";
    ssize_t unused = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)unused;
    _exit(CG_EXIT_INFRA);
}

/* What this rank says before it stops: on stderr and on its board slot
 * (cg_board_say), so the launcher reads it with the rank's end. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    cg_board_say(line);
}

/* Rank 0's share of a job: label the result, then hand it on. A
 * launcher's rank writes it as one line to the results stream, which
 * mpiexec carries to the launcher from whichever node rank 0 is on. */
static int deliver(const cg_options *o, FILE *results, cg_case_result *res, int index, int total)
{
    if (o->worker) {
        char *line = cg_case_json_line(res);
        int bad =
            !line || fprintf(results, "%s%s\n", CG_RESULT_PREFIX, line) < 0 || fflush(results) != 0;
        cJSON_free(line);
        return bad ? -1 : 0;
    }
    cg_term_case(stdout, res, index, total, o->verbose);
    return 0;
}

/* A data fault's count of visible changes in the job just run, every
 * rank's summed on rank 0 over plain MPI (the transport under test is the
 * faulty one). 0, or -1 when MPI fails. */
static int sum_injected(cg_tp *tp, long *total)
{
    long mine = cg_fault_take_count(tp);
    *total = 0;
    return MPI_Reduce(&mine, total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static int run_jobs(const cg_options *o, const cg_case_set *set, const cg_job *jobs, int njobs,
                    cg_tp *tp, bool data_fault, cg_process_fault *pfault,
                    cg_report *rep, FILE *results, int *worst)
{
    for (int i = 0; i < njobs; i++) {
        const cg_case *cs = set->cases[jobs[i].case_index];
        cg_board_job(i, cs->name);
        if (pfault)
            cg_process_fault_set_case(pfault, cs->name);
        cg_tol tol = cg_case_tol(cs, cg_tol_for(cs->dtype));
        cg_fault_set_case(tp, cs->name, tol.rtol, tol.atol);
        tp->ncoll = 0;
        cg_case_result *res = NULL;
        if (tp->rank == 0) {
            if (!(res = cg_report_add_case(rep, cs->name, cs->file, cs->source, tp->world)))
                return -1;
            cg_case_set_rules(res, jobs[i].rules);
        }
        if (!o->worker)
            alarm((unsigned)(o->timeout + 0.999));
        double t0 = cg_now();
        int eclass = 0;
        if (cg_worker_job(cs, &jobs[i], tp, cg_device_of(o), !o->no_fd, !o->no_diagnosis, res,
                          &eclass) != 0)
            return -1;
        alarm(0);
        long injected = 0;
        if (data_fault && sum_injected(tp, &injected) != 0)
            return -1;
        if (res && data_fault)
            res->injected = injected;
        if (res) {
            cg_case_finish(res);
            res->duration_s = cg_now() - t0;
            if (eclass > *worst)
                *worst = eclass;
            if (deliver(o, results, res, i + 1, njobs) != 0)
                return -1;
        }
    }
    return 0;
}

static int finish_direct(const cg_options *o, cg_report *rep, double t0, int worst)
{
    cg_report_count(rep);
    cg_term_summary(stdout, rep, cg_now() - t0);
    return cg_write_reports(o, rep, cg_injection_verdict(o, rep, cg_exit_status(rep, worst)));
}

/* Whether this rank runs where the launcher runs (--launch-host; without
 * it, a run started by hand: everything is local). */
static bool on_launch_host(const cg_options *o)
{
    char host[256];
    return !o->launch_host ||
           (cg_host_name(host, sizeof host) == 0 && strcmp(host, o->launch_host) == 0);
}

/* The launcher's cases and jobs, over MPI from a rank on its host; that
 * rank then marks on its board the ranks that cannot see the board, so the
 * launcher counts them as started and names them as elsewhere. Collective.
 * 0, or -1 after saying why (every rank fails alike). */
static int receive_bundle(const cg_options *o, bool on_host, cg_board *board, cg_case_set *set,
                          cg_job **jobs, int *njobs)
{
    cg_status st = CG_STATUS_OK;
    int reader = 0, rank = 0, world = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (cg_bundle_receive(o->bundle_file, on_host, &o->limits, set, jobs, njobs, &reader, &st) !=
        0) {
        say("rank %d: %s", rank, st.msg);
        return -1;
    }
    if (!o->board_file)
        return 0;
    int mine = board->base != NULL, seen[CG_MAX_WORLD] = {0};
    if (world > CG_MAX_WORLD) /* every rank knows the world: all skip alike */
        return 0;
    if (MPI_Gather(&mine, 1, MPI_INT, seen, 1, MPI_INT, reader, MPI_COMM_WORLD) != MPI_SUCCESS) {
        say("rank %d: cannot learn which ranks see the status board", rank);
        return -1;
    }
    for (int r = 0; rank == reader && board->base && r < world; r++)
        if (!seen[r])
            cg_board_mark_remote(board, r);
    return 0;
}

int cg_worker_main(const cg_options *o, const cg_case_set *set)
{
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "collgrad-check: MPI_Init failed\n");
        return CG_EXIT_INFRA;
    }
    double t0 = cg_now();
    int rc = 0, worst = 0, njobs = 0, rank = 0, world = 1;
    cg_board board = {0};
    cg_status st = CG_STATUS_OK;
    bool on_host = on_launch_host(o);
    /* the board first: what the rank says from here on is part of its end */
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS) {
        say("cannot learn this rank's place in MPI_COMM_WORLD");
        MPI_Abort(MPI_COMM_WORLD, CG_EXIT_INFRA);
    }
    if (o->board_file && on_host && cg_board_attach(&board, o->board_file, world, &st) == 0)
        cg_board_start_rank(&board, rank);
    else if (o->board_file && on_host) { /* a board that is not ours is bad input, never a SIGBUS later */
        say("%s", st.msg);
        rc = CG_EXIT_USAGE;
    }
    /* a launcher's rank: stdout is the results stream (deliver), and only
     * results go there; whatever else anything prints lands on stderr */
    FILE *results = NULL;
    if (o->worker) {
        int fd = dup(STDOUT_FILENO);
        if (fd < 0 || !(results = fdopen(fd, "w")) || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            say("cannot set the results stream aside: %s", strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, CG_EXIT_INFRA);
        }
    }
    cg_tp tp;
    cg_job *jobs = NULL;
    cg_report *rep = NULL;
    int pre = cg_device_precheck(o, &st);
    if (pre != 0) { /* the launcher checked already; ranks started by hand check here */
        if (rank == 0)
            say("%s", st.msg);
        cg_board_close(&board);
        MPI_Finalize();
        return pre;
    }
    if (cg_tp_open(&tp, o->transport, &st) != 0) {
        say("%s", st.msg);
        MPI_Abort(MPI_COMM_WORLD, CG_EXIT_INFRA);
    }
    if (board.base && cg_board_watch(&tp) != 0) {
        say("%s", tp.st.msg);
        rc = CG_EXIT_INFRA;
    }
    /* collective: every rank takes part whatever went wrong above */
    cg_case_set bundled = {0};
    if (o->bundle_file && receive_bundle(o, on_host, &board, &bundled, &jobs, &njobs) != 0 &&
        rc == 0)
        rc = CG_EXIT_INFRA;
    if (o->bundle_file)
        set = &bundled;
    if (!o->worker && cg_preflight_selection(o, set, tp.world, &st) != 0) {
        if (tp.rank == 0) /* every rank finds the same; one says it */
            say("%s", st.msg);
        rc = CG_EXIT_USAGE;
    }
    cg_fault fault;
    cg_process_fault pfault = {0}; /* lives as long as tp */
    int data_fault = o->inject ? cg_fault_parse(o->inject, &fault, &st) : 1;
    if (data_fault == 0) {
        if (cg_fault_install(&tp, &fault) != 0) {
            say("%s", tp.st.msg);
            rc = CG_EXIT_INFRA;
        }
    } else if (data_fault < 0 || (o->inject && cg_process_fault_parse(o->inject, &pfault, &st) != 0)) {
        say("%s", st.msg);
        rc = CG_EXIT_USAGE;
    } else if (o->inject && cg_process_fault_install(&tp, &pfault) != 0) {
        say("%s", tp.st.msg);
        rc = CG_EXIT_INFRA;
    }
    if (!o->worker)
        signal(SIGALRM, on_deadline);
    if (o->check_sync && cg_check_sync_install(&tp) != 0) {
        say("%s", tp.st.msg);
        rc = CG_EXIT_INFRA;
    }
    if (!o->bundle_file)
        njobs = cg_jobs_for_world(o, set, tp.world, &jobs);
    if (rc == 0 && njobs < 0) {
        say("cannot read the job list");
        rc = CG_EXIT_INFRA;
    }
    if (rc == 0 && tp.rank == 0 && (!(rep = cg_report_new("distributed", o->transport, o->rules ? o->rules : "reference",
                                                   cg_device_name(cg_device_of(o)))) ||
                                    cg_report_load_errors(rep, set) != 0))
        rc = CG_EXIT_INFRA;
    if (rc == 0 && run_jobs(o, set, jobs, njobs, &tp, data_fault == 0,
                            pfault.kind ? &pfault : NULL, rep, results, &worst) != 0) {
        say("rank %d: out of memory or MPI failure", tp.rank);
        rc = CG_EXIT_INFRA;
    }
    if (rc == 0 && tp.rank == 0 && !o->worker)
        rc = finish_direct(o, rep, t0, worst);
    cg_board_done();
    cg_report_free(rep);
    cg_case_set_free(&bundled);
    free(jobs);
    if (results)
        fclose(results);
    cg_fault_uninstall(&tp);
    cg_tp_close(&tp);
    cg_board_close(&board);
    MPI_Finalize();
    return rc;
}
