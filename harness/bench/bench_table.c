/* bench_table.c — what `collgrad-check bench` prints and writes (bench.h):
 * a table in nccl-tests' manner, and JSON rows for scripts. */
#include "bench.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "report_file.h"

void cg_bench_call(const cg_bench_opts *o, char *buf, size_t len)
{
    bool root = cg_coll_has_root(o->coll), op = cg_coll_has_op(o->coll); /* root comes first */
    snprintf(buf, len, "%s(x%s%s%s)", cg_coll_name(o->coll), root ? ", 0" : "", op ? ", " : "",
             op ? cg_redop_name(o->op) : "");
}

double cg_bench_busbw_factor(cg_coll_kind k, int world)
{
    return cg_collective_of(k)->busbw_factor(world);
}

void cg_bench_print_header(const cg_bench_opts *o)
{
    printf("# collgrad-check bench: %s %s, %s, rules %s, transport %s, device %s, W=%d, %d iters after %d "
           "warmup\n",
           cg_coll_name(o->coll), cg_coll_has_op(o->coll) ? cg_redop_name(o->op) : "-",
           cg_dtype_name(o->dtype), o->rules, o->transport, o->cuda ? "cuda" : "cpu", o->world, o->iters,
           o->warmup);
    printf("# times: slowest rank's mean per iteration; raw = forward + transpose over the bare transport\n");
    printf("#%11s %10s %9s %9s %9s %7s %7s %7s %6s %11s %11s %9s %9s %9s %6s %8s\n", "size(B)", "count",
           "fwd(ms)", "bwd(ms)", "raw(ms)", "algbw", "busbw", "rawbus", "ratio", "bwd_bytes", "transp_B",
           "peakRSS", "runRSS", "peakDev", "check", "check_s");
    printf("#%11s %10s %9s %9s %9s %7s %7s %7s %6s %11s %11s %9s %9s %9s %6s %8s\n", "", "(elems)", "", "",
           "", "GB/s", "GB/s", "GB/s", "", "(rank 0)", "(rank 0)", "(MiB)", "(MiB)", "(MiB)", "", "");
    fflush(stdout);
}

/* nccl-tests' algorithm bandwidth of one forward + backward taking t seconds */
static double algbw_of(const cg_bench_row *r, double t) { return t > 0 ? r->bytes / t / 1e9 : 0.0; }

void cg_bench_print_row(const cg_bench_opts *o, const cg_bench_row *r)
{
    double algbw = algbw_of(r, r->fwd_s + r->bwd_s), factor = cg_bench_busbw_factor(o->coll, o->world);
    char dev[16] = "-";
    if (r->peak_device_bytes >= 0)
        snprintf(dev, sizeof dev, "%.1f", r->peak_device_bytes / 1048576.0);
    printf(" %11lld %10lld %9.3f %9.3f %9.3f %7.3f %7.3f %7.3f %6.2f %11lld %11lld %9.1f %9.1f %9s %6s "
           "%8.3f\n",
           (long long)r->bytes, (long long)r->count, r->fwd_s * 1e3, r->bwd_s * 1e3, r->raw_s * 1e3, algbw,
           algbw * factor, algbw_of(r, r->raw_s) * factor, r->ratio, (long long)r->bwd_bytes,
           (long long)r->transpose_bytes, r->peak_rss_bytes / 1048576.0, r->peak_rss_run_bytes / 1048576.0, dev,
           !r->check_ran ? "-" : r->check_ok ? "ok" : "FAIL", r->check_s);
    if (r->check_ran && !r->check_ok)
        printf("#   check: %s\n", r->check_msg);
    fflush(stdout);
}

static cJSON *row_json(const cg_bench_opts *o, const cg_bench_row *r)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "collective", cg_coll_name(o->coll));
    cJSON_AddStringToObject(j, "op", cg_redop_name(o->op));
    cJSON_AddStringToObject(j, "dtype", cg_dtype_name(o->dtype));
    cJSON_AddStringToObject(j, "rules", o->rules);
    cJSON_AddStringToObject(j, "transport", o->transport);
    cJSON_AddNumberToObject(j, "world", o->world);
    cJSON_AddNumberToObject(j, "bytes", (double)r->bytes);
    cJSON_AddNumberToObject(j, "count", (double)r->count);
    cJSON_AddNumberToObject(j, "fwd_s", r->fwd_s);
    cJSON_AddNumberToObject(j, "bwd_s", r->bwd_s);
    cJSON_AddNumberToObject(j, "raw_s", r->raw_s);
    cJSON_AddNumberToObject(j, "raw_fwd_s", r->raw_fwd_s); /* the fastest call's forward alone */
    cJSON_AddNumberToObject(j, "ratio", r->ratio);
    double algbw = algbw_of(r, r->fwd_s + r->bwd_s), raw_algbw = algbw_of(r, r->raw_s);
    double factor = cg_bench_busbw_factor(o->coll, o->world);
    cJSON_AddNumberToObject(j, "algbw_gbs", algbw);
    cJSON_AddNumberToObject(j, "busbw_gbs", algbw * factor);
    cJSON_AddNumberToObject(j, "raw_algbw_gbs", raw_algbw); /* the floor: forward + transpose, bare */
    cJSON_AddNumberToObject(j, "raw_busbw_gbs", raw_algbw * factor);
    cJSON_AddNumberToObject(j, "bwd_bytes", (double)r->bwd_bytes);
    cJSON_AddNumberToObject(j, "transpose_bytes", (double)r->transpose_bytes);
    cJSON_AddNumberToObject(j, "peak_rss_bytes", (double)r->peak_rss_bytes);
    cJSON_AddNumberToObject(j, "peak_rss_run_bytes", (double)r->peak_rss_run_bytes);
    cJSON_AddStringToObject(j, "device", o->cuda ? "cuda" : "cpu");
    if (r->peak_device_bytes >= 0)
        cJSON_AddNumberToObject(j, "peak_device_bytes", (double)r->peak_device_bytes);
    else
        cJSON_AddNullToObject(j, "peak_device_bytes");
    if (r->check_ran) {
        cJSON_AddBoolToObject(j, "check_ok", r->check_ok);
        cJSON_AddNumberToObject(j, "check_s", r->check_s);
        cJSON_AddStringToObject(j, "check_message", r->check_msg);
    } else {
        cJSON_AddNullToObject(j, "check_ok");
        cJSON_AddNullToObject(j, "check_s");
    }
    return j;
}

int cg_bench_write_json(const cg_bench_opts *o, const cg_bench_row *rows, int n, const char *not_run,
                        cg_status *st)
{
    cJSON *top = cJSON_CreateObject(), *arr = top ? cJSON_AddArrayToObject(top, "rows") : NULL;
    int rc = arr && cJSON_AddStringToObject(top, "schema", "collgrad-check/bench/1") ? 0 : -1;
    if (rc == 0 && not_run && !cJSON_AddStringToObject(top, "not_run", not_run))
        rc = -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        cJSON *j = row_json(o, &rows[i]);
        if (!j || !cJSON_AddItemToArray(arr, j))
            rc = -1;
    }
    char *text = rc == 0 ? cJSON_Print(top) : NULL;
    cJSON_Delete(top);
    if (!text) {
        return cg_error_infra(st, "%s: out of memory", o->json);
    }
    rc = cg_report_output_write(o->json, text, st);
    free(text);
    return rc;
}
