/* bench_opts.c — `collgrad-check bench`'s options (bench.h), nccl-tests'
 * letters where nccl-tests has one, and its entry point: outside MPI it
 * starts `mpiexec -n W <itself> bench ...` and returns what the ranks said. */
#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "plugin_check.h"
#include "preflight.h"
#include "report_file.h"

/* The collectives bench times, from the table (collectives.h `benched`):
 * "all_reduce, all_gather, ... or all_to_all" with `last` before the last. */
static const char *benched_names(char *buf, size_t len, const char *last)
{
    int n = 0, total = 0;
    for (int k = 0; k < CG_C_COUNT; k++)
        total += cg_collective_of((cg_coll_kind)k)->benched;
    buf[0] = '\0';
    for (int k = 0; k < CG_C_COUNT; k++) {
        if (!cg_collective_of((cg_coll_kind)k)->benched)
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", n == 0 ? "" : n == total - 1 ? last : ", ",
                 cg_coll_name((cg_coll_kind)k));
        n++;
    }
    return buf;
}

static void usage(FILE *f)
{
    char names[256];
    fprintf(f,
            "usage: collgrad-check bench [options]\n"
            "Times a collective's forward and backward through a rule set over a transport,\n"
            "against the raw transport calls of the forward and of its transpose.\n"
            "  -b, --minbytes SIZE      smallest size (default 1M; K, M, G suffixes)\n"
            "  -e, --maxbytes SIZE      largest size (default 64M)\n"
            "  -f, --stepfactor F       multiply the size by F each step (default 4)\n"
            "  -n, --iters N            timed iterations per size (default 5)\n"
            "  -w, --warmup_iters N     untimed iterations first (default 1)\n"
            "  -c, --collective NAME    %s\n"
            "                           (default all_reduce)\n"
            "  -o, --op OP              sum, avg, prod, max, min (default sum)\n"
            "  -d, --datatype T         f32, f64, f16, bf16 (default f32)\n"
            "  -r, --rules NAME         rule set of the backward (default reference)\n"
            "  -t, --transport NAME     mpi, nccl or a plugin path (default mpi)\n"
            "  -W, --world W            ranks (default 4)\n"
            "      --device D           cpu or cuda: where the tensors and raw buffers live, the\n"
            "                           timed spans ending with a device synchronize (default cuda\n"
            "                           for --transport nccl, else cpu)\n"
            "      --json FILE          rows as JSON (- for standard output)\n"
            "      --no-check           skip the oracle + diff after each size\n"
            "      --oracle             time the oracle alone, W = 2..--oracle-max-world (default 1024)\n"
            "Sizes follow nccl-tests: the larger buffer (all_gather's output, reduce_scatter's input).\n"
            "Environment: CG_MPIEXEC, the mpiexec to launch the ranks with.\n",
            benched_names(names, sizeof names, ", "));
}

/* "64M" -> 67108864. -1 when not a size. */
static int64_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    default: break;
    }
    if (*end || v > (INT64_MAX >> shift))
        return -1;
    return (int64_t)v << shift;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int bad(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "collgrad-check bench: %s %s: expected %s\n", opt, val, want);
    return CG_EXIT_USAGE;
}

int cg_bench_parse(int argc, char **argv, cg_bench_opts *o)
{
    *o = (cg_bench_opts){.minbytes = 1 << 20, .maxbytes = 64 << 20, .factor = 4, .iters = 5, .warmup = 1,
                         .coll = CG_C_ALL_REDUCE, .op = CG_RED_SUM, .dtype = CG_F32, .rules = "reference",
                         .transport = "mpi", .world = 4, .check = true, .oracle_max_world = 1024};
    const char *device = NULL; /* --device; unset: cuda for nccl, as the main run (device.h) */
    const char *op = NULL;     /* -o as given: refused for a collective that reduces nothing */
    enum { O_JSON = 256, O_NOCHECK, O_ORACLE, O_ORACLE_MAX, O_IN_MPIEXEC, O_DEVICE };
    static const struct option longs[] = {
        {"minbytes", required_argument, 0, 'b'},    {"maxbytes", required_argument, 0, 'e'},
        {"stepfactor", required_argument, 0, 'f'},  {"iters", required_argument, 0, 'n'},
        {"warmup_iters", required_argument, 0, 'w'}, {"collective", required_argument, 0, 'c'},
        {"op", required_argument, 0, 'o'},          {"datatype", required_argument, 0, 'd'},
        {"rules", required_argument, 0, 'r'},       {"transport", required_argument, 0, 't'},
        {"world", required_argument, 0, 'W'},       {"json", required_argument, 0, O_JSON},
        {"no-check", no_argument, 0, O_NOCHECK},    {"oracle", no_argument, 0, O_ORACLE},
        {"oracle-max-world", required_argument, 0, O_ORACLE_MAX},
        {"in-mpiexec", no_argument, 0, O_IN_MPIEXEC}, {"help", no_argument, 0, 'h'},
        {"device", required_argument, 0, O_DEVICE},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, k;
    while ((c = getopt_long(argc, argv, ":b:e:f:n:w:c:o:d:r:t:W:h", longs, NULL)) != -1) {
        switch (c) {
        case 'b': if ((o->minbytes = parse_size(optarg)) < 0) return bad("-b", optarg, "a size"); break;
        case 'e': if ((o->maxbytes = parse_size(optarg)) < 0) return bad("-e", optarg, "a size"); break;
        case 'f': if (parse_int(optarg, 2, 1024, &o->factor)) return bad("-f", optarg, "2..1024"); break;
        case 'n': if (parse_int(optarg, 1, 1000000, &o->iters)) return bad("-n", optarg, "1..1e6"); break;
        case 'w': if (parse_int(optarg, 0, 1000000, &o->warmup)) return bad("-w", optarg, "0..1e6"); break;
        case 'W': if (parse_int(optarg, 1, CG_MAX_WORLD, &o->world)) return bad("-W", optarg, "1..64"); break;
        case 'c':
            if ((k = cg_coll_from_name(optarg)) < 0 || !cg_collective_of((cg_coll_kind)k)->benched) {
                char names[256];
                return bad("-c", optarg, benched_names(names, sizeof names, " or "));
            }
            o->coll = (cg_coll_kind)k;
            break;
        case 'o':
            if ((k = cg_redop_from_name(optarg)) < 0)
                return bad("-o", optarg, "sum, avg, prod, max or min");
            o->op = (cg_redop)k;
            op = optarg;
            break;
        case 'd':
            if (cg_dtype_parse(optarg, &o->dtype) != 0)
                return bad("-d", optarg, "f32, f64, f16 or bf16");
            break;
        case 'r': o->rules = optarg; break;
        case 't': o->transport = optarg; break;
        case O_JSON: o->json = optarg; break;
        case O_DEVICE:
            if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "cuda") != 0)
                return bad("--device", optarg, "cpu or cuda");
            device = optarg;
            break;
        case O_NOCHECK: o->check = false; break;
        case O_ORACLE: o->oracle = true; break;
        case O_ORACLE_MAX:
            if (parse_int(optarg, 2, 1 << 20, &o->oracle_max_world))
                return bad("--oracle-max-world", optarg, "2..1048576");
            break;
        case O_IN_MPIEXEC: o->in_mpiexec = true; break;
        case 'h': usage(stdout); return -1;
        case ':': fprintf(stderr, "collgrad-check bench: %s needs a value\n", argv[optind - 1]);
                  return CG_EXIT_USAGE;
        default: fprintf(stderr, "collgrad-check bench: unknown option %s\n", argv[optind - 1]);
                 usage(stderr);
                 return CG_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "collgrad-check bench: unexpected argument %s\n", argv[optind]);
        return CG_EXIT_USAGE;
    }
    if (op && !cg_coll_has_op(o->coll)) { /* it would be ignored, and the row mislabelled */
        fprintf(stderr, "collgrad-check bench: -o %s: %s reduces nothing (-o applies to all_reduce and "
                "reduce_scatter)\n", op, cg_coll_name(o->coll));
        return CG_EXIT_USAGE;
    }
    o->cuda = device ? strcmp(device, "cuda") == 0 : strcmp(o->transport, "nccl") == 0;
    if (o->minbytes < 1 || o->maxbytes < o->minbytes) {
        fprintf(stderr, "collgrad-check bench: expected 1 <= -b <= -e, got -b %lld -e %lld\n",
                (long long)o->minbytes, (long long)o->maxbytes);
        return CG_EXIT_USAGE;
    }
    return 0;
}

/* Outside MPI: run the same command as W ranks and return their status. */
static int launch(int argc, char **argv, int world)
{
    char self[4096], wbuf[16];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        perror("collgrad-check bench: /proc/self/exe");
        return CG_EXIT_INFRA;
    }
    self[len] = '\0';
    snprintf(wbuf, sizeof wbuf, "%d", world);
    const char *mpiexec = getenv("CG_MPIEXEC") && *getenv("CG_MPIEXEC") ? getenv("CG_MPIEXEC") : CG_MPIEXEC;
    const char **av = calloc((size_t)argc + 8, sizeof *av);
    if (!av) {
        fprintf(stderr, "collgrad-check bench: out of memory\n");
        return CG_EXIT_INFRA;
    }
    int n = 0;
    av[n++] = mpiexec;
    av[n++] = "-n";
    av[n++] = wbuf;
    av[n++] = self;
    for (int i = 0; i < argc; i++)
        av[n++] = argv[i];
    av[n++] = "--in-mpiexec";
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(av[0], (char *const *)av);
        fprintf(stderr, "collgrad-check bench: cannot run %s: %s\n", av[0], strerror(errno));
        _exit(CG_EXIT_INFRA);
    }
    free(av);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) {
        perror("collgrad-check bench: mpiexec");
        return CG_EXIT_INFRA;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : CG_EXIT_INFRA;
}

/* Before W ranks start: the rule set, the transport and the JSON target,
 * so a mistake is one line (the ranks would each say it, and abort). A
 * report on standard output is left to rank 0, which owns that stream. */
static int precheck(const cg_bench_opts *o)
{
    cg_options names = {.rules = o->rules, .transport = o->transport};
    cg_status st = CG_STATUS_OK;
    int rc = cg_preflight_names(&names, &st);
    if (rc == 0 && o->json && strcmp(o->json, "-") != 0 && cg_report_targets_prepare(o->json, NULL, &st) != 0)
        rc = CG_EXIT_USAGE;
    if (rc == 0 && cg_transport_precheck(o->transport, &st) != 0)
        rc = CG_EXIT_INFRA; /* no GPU for nccl: the machine's, as the run's own precheck says (main.c) */
    if (rc != 0)
        fprintf(stderr, "collgrad-check bench: %s\n", st.msg);
    return rc;
}

int cg_bench_main(int argc, char **argv)
{
    cg_bench_opts o;
    int rc = cg_bench_parse(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? CG_EXIT_OK : rc;
    if (o.oracle)
        return cg_bench_oracle(&o);
    if (!o.in_mpiexec)
        return (rc = precheck(&o)) != 0 ? rc : launch(argc, argv, o.world);
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "collgrad-check bench: MPI_Init failed\n");
        return CG_EXIT_INFRA;
    }
    rc = cg_bench_ranks(&o);
    MPI_Finalize();
    return rc;
}
