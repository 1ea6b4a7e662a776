/* worker_main.c — the MPI entry point of a distributed run (worker.h). */
#include <cjson/cJSON.h>
#include <mpi.h>
#include <signal.h>
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

bool cg_launched_by_mpi(void)
{
    char why[512];
    return cg_launch_env_detect(why, sizeof why) == CG_LAUNCH_RANK; /* launch_env.h says how */
}

/* "case_index expect_only rules" per line, written by the launcher; the
 * rules (a name or a plugin path) run to the end of the line. */
static int read_jobs(const char *path, int ncases, cg_job **jobs)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, cap = 16;
    cg_job *j = malloc((size_t)cap * sizeof *j);
    char line[1024];
    while (j && fgets(line, sizeof line, f)) {
        int idx, only, at = 0;
        line[strcspn(line, "\n")] = '\0';
        if (sscanf(line, "%d %d %n", &idx, &only, &at) < 2 || at == 0)
            continue;
        if (idx < 0 || idx >= ncases) { /* the launcher loaded another set: never index past it */
            fprintf(stderr, "collgrad-check: the job list names case %d of a set of %d\n", idx, ncases);
            free(j);
            fclose(f);
            return -1;
        }
        if (n == cap) {
            cap *= 2;
            cg_job *g = realloc(j, (size_t)cap * sizeof *g);
            if (!g)
                break;
            j = g;
        }
        j[n].case_index = idx;
        snprintf(j[n].rules, sizeof j[n].rules, "%s", line + at);
        j[n].expect_only = only != 0;
        n++;
    }
    fclose(f);
    *jobs = j;
    return j ? n : -1;
}

/* --check-sync, a watcher stacked on the transport (transport.h): every
 * rank's fingerprint of the collective it is about to issue, compared over
 * plain MPI (not the transport under test). Sends and receives pair two
 * ranks only, so there is nothing for all to agree on. */
static int check_sync(void *self, cg_tp *tp, const cg_tp_fingerprint *fp)
{
    enum { F = 6 };
    (void)self;
    if (fp->entry == CG_C_SEND || fp->entry == CG_C_RECV || fp->entry == CG_TP_BARRIER)
        return 0;
    long long mine[F] = {fp->entry, fp->dtype, (long long)fp->count, fp->root, fp->backward, fp->seq};
    long long *all = malloc(sizeof(long long) * F * (size_t)tp->world);
    if (!all || MPI_Allgather(mine, F, MPI_LONG_LONG, all, F, MPI_LONG_LONG, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(all);
        cg_error(&tp->st, "--check-sync: comparing fingerprints over MPI failed");
        return -1;
    }
    int rc = 0;
    for (int r = 1; r < tp->world && rc == 0; r++) {
        const long long *a = all, *b = all + F * r;
        if (memcmp(a, b, sizeof(long long) * F) == 0)
            continue;
        /* the program's call each rank serves (seq) is compared too: a rank
         * that skipped a collective issues the next one, which may look the
         * same in every other field */
        cg_error(&tp->st, "desync: rank %d issued %s #%d (%s, %s, %lld elements, root %lld, "
                 "program call %lld) while rank 0 issued %s #%d (%s, %s, %lld elements, root %lld, program call %lld)",
                 r, cg_tp_entry_name((cg_tp_entry)b[0]), fp->ordinal, b[4] ? "backward" : "forward",
                 cg_dtype_name((cg_dtype)b[1]), b[2], b[3], b[5], cg_tp_entry_name((cg_tp_entry)a[0]), fp->ordinal,
                 a[4] ? "backward" : "forward", cg_dtype_name((cg_dtype)a[1]), a[2], a[3], a[5]);
        rc = -1;
    }
    free(all);
    return rc;
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

static int append_line(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    if (!f)
        return -1;
    int bad = fprintf(f, "%s\n", line) < 0;
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* Rank 0's share of a job: label the result, then hand it on. */
static int deliver(const cg_options *o, cg_report *rep, cg_case_result *res, int index, int total)
{
    if (o->results_file) {
        char *line = cg_case_json_line(res);
        int rc = line ? append_line(o->results_file, line) : -1;
        cJSON_free(line);
        return rc;
    }
    cg_term_case(stdout, res, index, total, o->verbose);
    (void)rep;
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

static int run_jobs(const cg_options *o, const cg_case_set *set, const cg_job *jobs, int njobs, cg_tp *tp,
                    cg_tp *trusted, bool data_fault, cg_process_fault *pfault, cg_report *rep,
                    int *worst)
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
        if (cg_worker_job(cs, &jobs[i], tp, trusted, cg_device_of(o), !o->no_fd, res, &eclass) != 0)
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
            if (deliver(o, rep, res, i + 1, njobs) != 0)
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

int cg_worker_main(const cg_options *o, const cg_case_set *set)
{
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "collgrad-check: MPI_Init failed\n");
        return CG_EXIT_INFRA;
    }
    double t0 = cg_now();
    int rc = 0, worst = 0, njobs = 0;
    cg_tp tp;
    cg_board board = {0};
    cg_job *jobs = NULL;
    cg_report *rep = NULL;
    cg_status st = CG_STATUS_OK;
    int pre = cg_device_precheck(o, &st);
    if (pre != 0) { /* the launcher checked already; ranks started by hand check here */
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr, "collgrad-check: %s\n", st.msg);
        MPI_Finalize();
        return pre;
    }
    if (cg_tp_open(&tp, o->transport, &st) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        MPI_Abort(MPI_COMM_WORLD, CG_EXIT_INFRA);
    }
    if (o->board_file && cg_board_attach(&board, o->board_file, tp.world, &st) == 0) {
        cg_board_start_rank(&board, tp.rank);
        if (cg_board_watch(&tp) != 0) {
            fprintf(stderr, "collgrad-check: %s\n", tp.st.msg);
            rc = CG_EXIT_INFRA;
        }
    } else if (o->board_file) { /* a board that is not ours is bad input, never a SIGBUS later */
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        rc = CG_EXIT_USAGE;
    }
    if (!o->worker && cg_preflight_selection(o, set, tp.world, &st) != 0) {
        if (tp.rank == 0) /* every rank finds the same; one says it */
            fprintf(stderr, "collgrad-check: %s\n", st.msg);
        rc = CG_EXIT_USAGE;
    }
    cg_fault fault;
    cg_process_fault pfault = {0}; /* lives as long as tp */
    int data_fault = o->inject ? cg_fault_parse(o->inject, &fault, &st) : 1;
    if (data_fault == 0) {
        if (cg_fault_install(&tp, &fault) != 0) {
            fprintf(stderr, "collgrad-check: %s\n", tp.st.msg);
            rc = CG_EXIT_INFRA;
        }
    } else if (data_fault < 0 || (o->inject && cg_process_fault_parse(o->inject, &pfault, &st) != 0)) {
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        rc = CG_EXIT_USAGE;
    } else if (o->inject && cg_process_fault_install(&tp, &pfault) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", tp.st.msg);
        rc = CG_EXIT_INFRA;
    }
    if (!o->worker)
        signal(SIGALRM, on_deadline);
    if (o->check_sync && cg_tp_watch(&tp, (cg_tp_watcher){check_sync, NULL, NULL}) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", tp.st.msg);
        rc = CG_EXIT_INFRA;
    }
    njobs = o->jobs_file ? read_jobs(o->jobs_file, set->n, &jobs) : cg_jobs_for_world(o, set, tp.world, &jobs);
    if (rc == 0 && njobs < 0) {
        fprintf(stderr, "collgrad-check: cannot read the job list\n");
        rc = CG_EXIT_INFRA;
    }
    if (rc == 0 && tp.rank == 0 && (!(rep = cg_report_new("distributed", o->transport, o->rules ? o->rules : "reference",
                                                   cg_device_name(cg_device_of(o)))) ||
                                    cg_report_load_errors(rep, set) != 0))
        rc = CG_EXIT_INFRA;
    /* diagnosis re-runs use the built-in MPI transport, not the one under test */
    cg_tp own_mpi, *trusted = &tp;
    bool second = strcmp(o->transport, "mpi") != 0 || data_fault == 0;
    if (rc == 0 && second) {
        if (cg_tp_open(&own_mpi, "mpi", &st) != 0) {
            fprintf(stderr, "collgrad-check: %s\n", st.msg);
            rc = CG_EXIT_INFRA;
            second = false;
        } else {
            trusted = &own_mpi; /* its calls show on the board too */
            if (o->board_file && cg_board_watch(&own_mpi) != 0) {
                fprintf(stderr, "collgrad-check: %s\n", own_mpi.st.msg);
                rc = CG_EXIT_INFRA;
            }
        }
    }
    if (rc == 0 && run_jobs(o, set, jobs, njobs, &tp, trusted, data_fault == 0,
                           pfault.kind ? &pfault : NULL, rep, &worst) != 0) {
        fprintf(stderr, "collgrad-check: rank %d: out of memory or MPI failure\n", tp.rank);
        rc = CG_EXIT_INFRA;
    }
    if (rc == 0 && tp.rank == 0 && !o->worker)
        rc = finish_direct(o, rep, t0, worst);
    cg_board_done();
    cg_report_free(rep);
    free(jobs);
    if (second)
        cg_tp_close(&own_mpi);
    cg_fault_uninstall(&tp);
    cg_tp_close(&tp);
    cg_board_close(&board);
    MPI_Finalize();
    return rc;
}
