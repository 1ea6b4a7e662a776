/* bench_oracle.c — `collgrad-check bench --oracle` (bench.h): the oracle
 * alone, in this process, over simulated world sizes W = 2, 4, ... and
 * per-rank sizes N from -b to -e (bytes of the dtype), then the exponent p of
 * time ~ (W N)^p fitted by least squares on the logs. p near 1 is the
 * linear oracle; the old one-backward-per-root oracle gave p near 1.5 for
 * all_reduce (W^2 N at fixed N) and more for all_gather.
 *
 * The program is the bench's: x = param(ones(N) * (rank + 1)); y = COLL(x);
 * backward(y). all_gather's N is its input per rank here, so that W N is the
 * number of simulated input elements for every collective. */
#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "oracle.h"
#include "rss.h"
#include "runner.h"

int cg_bench_oracle(const cg_bench_opts *o)
{
    int maxw = o->oracle_max_world < CG_MAX_SIM_WORLD ? o->oracle_max_world : CG_MAX_SIM_WORLD;
    if (o->oracle_max_world > CG_MAX_SIM_WORLD)
        printf("# W is capped at %d (CG_MAX_SIM_WORLD) in this build\n", CG_MAX_SIM_WORLD);
    printf("# collgrad-check bench --oracle: %s, f64 simulation of every rank in one process\n",
           cg_coll_name(o->coll));
    printf("#%6s %12s %14s %10s %12s %10s\n", "W", "N(per rank)", "W*N", "time(s)", "peakRSS(MiB)", "B/elem");
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int npts = 0, rc = CG_EXIT_OK;
    size_t esz = cg_dtype_size(o->dtype);
    /* Bytes per simulated element, to size a point before it runs: the last
     * measured at a million elements or more (below, fixed costs dominate)
     * with a fifth to spare; until then 40 (about 32 measured for the f64
     * values, gradients and tape of the linear oracle). */
    double per_elem = 40;
    bool full = false; /* a point did not fit: larger N and W need more */
    for (int w = 2; w <= maxw && rc == CG_EXIT_OK && !full; w *= 2) {
        for (int64_t bytes = o->minbytes; bytes <= o->maxbytes; bytes *= o->factor) {
            int64_t n = bytes / (int64_t)esz > 0 ? bytes / (int64_t)esz : 1;
            double need = per_elem * (double)w * (double)n, avail = (double)cg_mem_available();
            if (avail > 0 && need > 0.8 * avail) {
                printf("# W=%d N=%lld and larger: not run: needs about %.1f GiB, %.1f GiB available\n", w,
                       (long long)n, need / 1073741824.0, avail / 1073741824.0);
                full = bytes == o->minbytes; /* a larger W at the smallest N does not fit either */
                break;
            }
            cg_status st = CG_STATUS_OK;
            cg_case *cs = cg_bench_program(o, w, n, &st);
            if (!cs) {
                fprintf(stderr, "collgrad-check bench: %s\n", st.msg);
                return CG_EXIT_INFRA;
            }
            malloc_trim(0); /* the last run's memory, kept in the heap, is not this run's */
            cg_rss_reset_peak();
            int64_t rss0 = cg_rss_peak();
            double t0 = cg_now();
            cg_oracle *orc = cg_oracle_run(cs, w, false);
            double t = cg_now() - t0;
            int64_t grew = cg_rss_peak() - rss0;
            if (!orc || orc->st.code != 0) {
                fprintf(stderr, "collgrad-check bench: W=%d N=%lld: %s\n", w, (long long)n,
                        orc ? orc->st.msg : "out of memory");
                rc = CG_EXIT_INFRA;
            }
            cg_oracle_free(orc);
            cg_case_free(cs);
            if (rc != CG_EXIT_OK)
                break;
            double wn = (double)w * (double)n;
            if (wn >= 1048576 && grew > 0)
                per_elem = 1.2 * (double)grew / wn;
            printf(" %6d %12lld %14.0f %10.4f %12.1f %10.1f\n", w, (long long)n, wn, t, grew / 1048576.0,
                   grew / wn);
            fflush(stdout);
            if (t >= 0.01) { /* below that, timer noise and fixed costs dominate */
                double lx = log(wn), ly = log(t);
                sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, npts++;
            }
            if (bytes > INT64_MAX / o->factor)
                break;
        }
    }
    if (npts >= 2 && npts * sxx - sx * sx > 0)
        printf("# fitted growth: time ~ (W*N)^%.2f over %d points (1.00 is linear)\n",
               (npts * sxy - sx * sy) / (npts * sxx - sx * sx), npts);
    else
        printf("# fitted growth: too few points above 10 ms to fit\n");
    return rc;
}
