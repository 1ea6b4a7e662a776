/* backend_pytorch_internal.h — shared by the files of the PyTorch backend:
 * backend_pytorch.c (the run: launches, deadline, progress),
 * backend_pytorch_read.c (the ranks' result lines), backend_pytorch_judge.c
 * (oracle, diff, diagnosis) and pytorch_env.c (interpreter, package,
 * isolation, starting the ranks). Not a public interface. */
#ifndef CG_BACKEND_PYTORCH_INTERNAL_H
#define CG_BACKEND_PYTORCH_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "backend_pytorch.h"
#include "observed.h"
#include "oracle.h"

typedef enum { CG_PT_PENDING = 0, CG_PT_OK, CG_PT_RAISED, CG_PT_HANG, CG_PT_SKIPPED } cg_pt_outcome;

/* What one rank reported for one job. Owns every string and obs. */
typedef struct cg_pt_rank {
    cg_pt_outcome outcome;
    char *type, *message, *phase, *at, *by, *origin; /* RAISED and HANG: the exception */
    char *reason;                                    /* SKIPPED: why */
    char *ran;                                       /* how the framework ran it: "psum, all_gather" */
    int nwarnings;
    char **warnings;      /* "UserWarning at backward (file:l:c): message" */
    cg_obs_rank obs;      /* final bindings; obs.error: the error line the diff sees */
    double seconds;
} cg_pt_rank;

/* One case at the run's world, as a job of the Python ranks. */
typedef struct cg_pt_job {
    int case_index;
    cg_oracle *plan;      /* the oracle at this world (owned) */
    cg_pt_rank ranks[CG_MAX_WORLD];
    int reported;         /* ranks whose line for this job arrived */
} cg_pt_job;

/* A rank's first line: what it runs on. Owns its strings. */
typedef struct cg_pt_hello {
    bool seen;
    char *torch, *python, *python_version, *backend_name, *api_unavailable;
} cg_pt_hello;

void cg_pt_rank_free(cg_pt_rank *r);
void cg_pt_hello_free(cg_pt_hello *h);

/* Reading one rank's results file as it grows. */
typedef struct cg_pt_reader {
    char path[512];
    long offset;          /* bytes of complete lines consumed */
} cg_pt_reader;

/* A rank's "fatal" line: why no job can run, and whether it is the user's
 * input the rank refused ("class": 2, a usage error: a COLLGRAD_KINDS file
 * that does not load) rather than the machinery failing. */
typedef struct cg_pt_fatal {
    char *why; /* malloc'd; NULL while no rank wrote one */
    bool usage;
} cg_pt_fatal;

/* Consume the complete new lines of rank `rank`'s file into hello and jobs
 * (njobs entries, indexed by the job number of the line). A "fatal" line
 * fills *fatal (the first one kept). Returns the number of job lines read,
 * or -1 with st when a line is not what the ranks write. */
int cg_pt_read_rank(cg_pt_reader *rd, int rank, cg_pt_job *jobs, int njobs, cg_pt_hello *hello,
                    cg_pt_fatal *fatal, cg_status *st);

/* Everything a judgment needs besides the job. */
typedef struct cg_pt_context {
    bool jax;               /* --backend jax:API: one JAX process for the W devices (collgrad_jax.runner) */
    const char *api;        /* nn, c10d, funcol, gatherlayer, diffdist; shard_map, shard_map_novma */
    const char *label;      /* "pytorch:nn": the jobs' rules in the report */
    const char *emulation;  /* the rule set that claims to be this API: torch-nn, ... */
    const char *torch;      /* torch.__version__ of rank 0 (jax.__version__ under jax:API) */
    const char *backend;    /* the process group's name */
    bool fd;                /* run the finite-difference check of the oracle */
    bool diagnose;          /* name the emulation a wrong result matches (not --no-diagnosis) */
} cg_pt_context;

/* The rule set that emulates an API (torch-nn for nn, ...). */
const char *cg_pt_emulation_of(const char *api);

/* Judge a job every rank reported into res: skipped, a hang (error class 3),
 * or the oracle's checks, the diff against it and, on a mismatch, the
 * diagnosis. Returns the job's error class (0, 2 or 3). */
int cg_pt_judge(const cg_pt_context *ctx, const cg_case *cs, cg_pt_job *job, int world, cg_case_result *res);

/* ---- the environment (pytorch_env.c) ----------------------------------------- */

/* The interpreter for the ranks: `given` (--python), else $COLLGRAD_PYTHON,
 * else /usr/bin/python3 when it has torch, else python3 on PATH. Fills path
 * and why ("--python", "$COLLGRAD_PYTHON", ...). -1 with why when none is
 * found or the chosen one has no torch. With jax: the same for jax, whose
 * places are --python, $COLLGRAD_JAX_PYTHON, /opt/venv-jax/bin/python
 * (scripts/jax-venv.sh) when it has jax, else python3 on PATH. */
int cg_pt_find_python(const char *given, bool jax, char *path, size_t len, char *why, size_t whylen);

/* The directory holding collgrad_torch: installed beside the executable
 * (bin/../share/collgrad-check/python), else the source tree's python/. */
int cg_pt_package_dir(char *buf, size_t len);

/* One launch of W ranks. */
typedef struct cg_pt_launch {
    bool jax;                       /* one collgrad_jax.runner process writes every rank's files */
    int world, first_job;
    const char *python, *package_dir, *api, *torch_backend;
    const char *ir, *store, *dir;   /* files of this launch live in dir */
    int launch;                     /* numbers the results/status/log files */
    double collective_timeout, startup_timeout;
    bool isolate;                   /* enter a private network namespace first */
} cg_pt_launch;

/* The per-rank file of a launch: kind is "results", "status" or "log". */
void cg_pt_rank_file(const cg_pt_launch *L, const char *kind, int rank, char *buf, size_t len);

/* Start the ranks under one supervisor process (a new process group, in a
 * private network namespace when L->isolate): W rank processes, or under
 * jax one process whose W host devices are the ranks. Returns its pid, or -1. */
pid_t cg_pt_spawn(const cg_pt_launch *L);

/* Can this process give the ranks a private network namespace (root and
 * unshare(CLONE_NEWNET) allowed)? Sets how the ranks are isolated in desc. */
bool cg_pt_can_isolate(char *desc, size_t len);

/* ---- the run (backend_pytorch.c) and its launches (backend_pytorch_launch.c) ---- */

/* A run (backend_pytorch.c): the options, the report, where its files go,
 * and the progress count. */
typedef struct cg_pt_run {
    const cg_options *o;
    const cg_case_set *set;
    cg_report *rep;
    cg_pt_context ctx;
    char dir[PATH_MAX];
    char python[PATH_MAX], python_why[600], package[PATH_MAX], isolation[256];
    bool isolate, announced;
    int index, total, worst;
    /* A launch the ranks refused (the user's input: a COLLGRAD_KINDS file that
     * does not load) is not tried again at the next world size: its jobs get
     * the same refusal. "" while none was. */
    char refused[3000];
} cg_pt_run;

/* Every rank's first line arrived: say once what is measured; record it. */
void cg_pt_announce(cg_pt_run *R, const cg_pt_hello *h, int world);
/* Judge a job every rank reported, add it to the report, print its line. */
void cg_pt_judge_job(cg_pt_run *R, cg_pt_job *job, int world);

typedef enum { CG_PT_LAUNCH_DONE, CG_PT_LAUNCH_LOST_JOB, CG_PT_LAUNCH_FATAL, CG_PT_LAUNCH_REFUSED } cg_pt_launch_end;

/* Start L's ranks and follow them from jobs[*next] (n jobs), judging each
 * job as it completes and advancing *next. DONE when every job was judged;
 * LOST_JOB when the ranks stopped short of jobs[*next] (why says how and
 * where each rank was; the caller records it and relaunches after it);
 * FATAL when no job can run (a rank's fatal line, or ranks that never
 * started); REFUSED when that fatal line is a usage error. The ranks are
 * gone and the launch's files removed on return. */
cg_pt_launch_end cg_pt_follow_launch(cg_pt_run *R, const cg_pt_launch *L, cg_pt_job *jobs, int n, int *next,
                                     char *why, size_t whylen);

#endif
