/* mpitest_transport.c — the built-in "mpi" transport, driven through the
 * cg_tp wrappers exactly as rule sets use it. Run under mpiexec -n W for
 * W = 1..4; every rank checks its own results, rank 0 prints the totals and
 * every rank exits non-zero when any rank saw a failure.
 *
 * Expected values come only from arithmetic in this file: each rank knows
 * what every other rank contributes (a function of rank and index), so the
 * result of a collective is computed here with a plain loop over ranks. */
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"

/* The program call every transport call below serves (messages name it). */
#define SITE ((cg_tp_site){0, false})

static int g_rank, g_world, g_pass, g_fail;

/* Records one check; a failure prints where and why. */
__attribute__((format(printf, 3, 4))) static void check(bool ok, int line, const char *fmt, ...)
{
    if (ok) {
        g_pass++;
        return;
    }
    g_fail++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
#define CHECK(cond, ...) check((cond), __LINE__, __VA_ARGS__)

#define MAXN 64     /* the most elements any buffer here holds */
#define SENTINEL -99.0

static const cg_dtype dtypes[] = {CG_F32, CG_F64, CG_BF16, CG_F16};
static const char *const dt_names[] = {"f32", "f64", "bf16", "f16"};
static const double dt_eps[] = {0x1p-23, 0x1p-52, 0x1p-7, 0x1p-10};
static const char *const op_names[] = {"sum", "avg", "prod", "max", "min"};

static double sendb[MAXN], recvb[MAXN]; /* raw storage for any dtype; double-aligned */
static double want[MAXN];

static void put(cg_dtype dt, void *b, size_t i, double v)
{
    switch (dt) {
    case CG_F32: ((float *)b)[i] = (float)v; break;
    case CG_F64: ((double *)b)[i] = v; break;
    case CG_BF16: ((uint16_t *)b)[i] = cg_f32_to_bf16((float)v); break;
    case CG_F16: ((uint16_t *)b)[i] = cg_f32_to_f16((float)v); break;
    }
}

static double get(cg_dtype dt, const void *b, size_t i)
{
    switch (dt) {
    case CG_F32: return ((const float *)b)[i];
    case CG_F64: return ((const double *)b)[i];
    case CG_BF16: return cg_bf16_to_f32(((const uint16_t *)b)[i]);
    case CG_F16: return cg_f16_to_f32(((const uint16_t *)b)[i]);
    }
    return NAN;
}

static void fill(cg_dtype dt, void *b, size_t n, double v)
{
    for (size_t i = 0; i < n; i++)
        put(dt, b, i, v);
}

/* Element i of rank r's input to a reduction. All are exact in all four
 * dtypes, and so is every partial result, so only AVG's division rounds:
 * SUM/AVG: (r+1)*10 + i%8, partial sums are integers <= 128;
 * PROD: -2, 1 or 0.5, partial products are +-powers of two <= 16;
 * MAX/MIN: integers in -5..5 whose extreme lies on different ranks per i. */
static double value(cgt_redop op, int r, size_t i)
{
    static const double prod_vals[] = {-2.0, 1.0, 0.5};
    switch (op) {
    case CGT_SUM:
    case CGT_AVG: return (r + 1) * 10.0 + (double)(i % 8);
    case CGT_PROD: return prod_vals[((size_t)r + i) % 3];
    case CGT_MAX:
    case CGT_MIN: return (double)(((size_t)r * 7 + i * 3) % 11) - 5.0;
    }
    return NAN;
}

static double reduced(cgt_redop op, size_t i)
{
    double acc = value(op, 0, i);
    for (int r = 1; r < g_world; r++) {
        double v = value(op, r, i);
        if (op == CGT_SUM || op == CGT_AVG) acc += v;
        if (op == CGT_PROD) acc *= v;
        if (op == CGT_MAX) acc = v > acc ? v : acc;
        if (op == CGT_MIN) acc = v < acc ? v : acc;
    }
    return op == CGT_AVG ? acc / g_world : acc;
}

/* Element k of rank r's block in data-movement tests; exact in every dtype
 * and never 0 or SENTINEL, so misplaced or missing blocks show. */
static double block_value(int r, size_t k) { return r * 16.0 + (double)k + 1.0; }

/* Compares n elements with want[]; AVG may differ by its one rounding. */
static void expect(const char *what, cg_dtype dt, const void *buf, size_t n, bool avg)
{
    for (size_t i = 0; i < n; i++) {
        double got = get(dt, buf, i), tol = avg ? dt_eps[dt] * fabs(want[i]) : 0.0;
        if (!(fabs(got - want[i]) <= tol)) {
            CHECK(false, "%s: element %zu is %g, want %g", what, i, got, want[i]);
            return;
        }
    }
    CHECK(true, "%s", what);
}

/* Two ragged layouts: rank k owns k+1 elements, or k (rank 0 owns none). */
static size_t ragged(int pattern, size_t *counts)
{
    size_t total = 0;
    for (int k = 0; k < g_world; k++)
        total += counts[k] = (size_t)k + (pattern == 0 ? 1 : 0);
    return total;
}

static size_t offset_of(const size_t *counts, int rank)
{
    size_t off = 0;
    for (int k = 0; k < rank; k++)
        off += counts[k];
    return off;
}

static int n_roots(void) { return g_world > 1 ? 2 : 1; }
static int root_at(int j) { return j == 0 ? 0 : g_world - 1; }

/* ---- reductions ------------------------------------------------------------ */

/* all_reduce (j = -1) and reduce at root 0 and W-1, each in and out of place. */
static void test_reductions(cg_tp *tp)
{
    const size_t n = 13;
    char what[96];
    for (int d = 0; d < 4; d++)
        for (cgt_redop op = CGT_SUM; op <= CGT_MIN; op++)
            for (int j = -1; j < n_roots(); j++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    cg_dtype dt = dtypes[d];
                    int root = j < 0 ? -1 : root_at(j);
                    bool has_result = root < 0 || g_rank == root;
                    for (size_t i = 0; i < n; i++) {
                        put(dt, sendb, i, value(op, g_rank, i));
                        want[i] = reduced(op, i);
                    }
                    fill(dt, recvb, n, SENTINEL);
                    void *out = in_place && has_result ? (void *)sendb : (void *)recvb;
                    snprintf(what, sizeof what, "%s %s %s root %d%s",
                             root < 0 ? "all_reduce" : "reduce", dt_names[d], op_names[op], root,
                             in_place ? " in place" : "");
                    int rc = root < 0 ? cg_tp_all_reduce(tp, SITE, sendb, out, n, dt, op)
                                      : cg_tp_reduce(tp, SITE, sendb, out, n, dt, op, root);
                    CHECK(rc == 0, "%s: %s", what, tp->st.msg);
                    if (has_result)
                        expect(what, dt, out, n, op == CGT_AVG);
                }
    CHECK(cg_tp_all_reduce(tp, SITE, sendb, recvb, 0, CG_F32, CGT_SUM) == 0, "empty all_reduce: %s",
          tp->st.msg);
}

/* A reduce larger than any piece the transport may split it into (the mpi
 * transport reduces in pieces of 16 MiB to bound MPICH's temporaries), with
 * a remainder: every element summed once, at root W-1, in and out of place,
 * in f32 (one piece and 5 elements) and f64 (two pieces and 5). In place at a
 * root other than 0 is where MPICH 4.0.2's MPI_Reduce with MPI_IN_PLACE
 * crashes from about 1000 elements on (pmodels/mpich#6540). */
static void test_reduce_in_pieces(cg_tp *tp)
{
    const size_t n = ((size_t)16 << 20) / 4 + 5; /* a piece of f32 and 5 more; two of f64 and 5 */
    const cg_dtype dts[] = {CG_F32, CG_F64};
    int root = g_world - 1;
    void *send = malloc(n * sizeof(double)), *recv = malloc(n * sizeof(double));
    CHECK(send && recv, "out of memory for %zu elements", n);
    for (int d = 0; send && recv && d < 2; d++)
        for (int in_place = 0; in_place < 2; in_place++) {
            cg_dtype dt = dts[d];
            for (size_t i = 0; i < n; i++)
                put(dt, send, i, value(CGT_SUM, g_rank, i));
            fill(dt, recv, n, SENTINEL);
            void *out = in_place && g_rank == root ? send : recv;
            int rc = cg_tp_reduce(tp, SITE, send, out, n, dt, CGT_SUM, root);
            CHECK(rc == 0, "reduce of %zu %s: %s", n, dt == CG_F32 ? "f32" : "f64", tp->st.msg);
            size_t bad = n;
            for (size_t i = 0; rc == 0 && g_rank == root && i < n && bad == n; i++)
                if (get(dt, out, i) != reduced(CGT_SUM, i))
                    bad = i;
            CHECK(bad == n, "reduce of %zu %s%s: element %zu is %g, want %g", n, dt == CG_F32 ? "f32" : "f64",
                  in_place ? " in place" : "", bad, bad < n ? get(dt, out, bad) : 0.0,
                  bad < n ? reduced(CGT_SUM, bad) : 0.0);
        }
    CHECK(cg_tp_reduce(tp, SITE, sendb, recvb, 0, CG_F32, CGT_SUM, 0) == 0, "empty reduce: %s", tp->st.msg);
    free(send);
    free(recv);
}

static void test_reduce_scatter(cg_tp *tp)
{
    size_t counts[4];
    char what[96];
    for (int d = 0; d < 4; d++)
        for (cgt_redop op = CGT_SUM; op <= CGT_MIN; op++)
            for (int pattern = 0; pattern < 2; pattern++) {
                cg_dtype dt = dtypes[d];
                size_t total = ragged(pattern, counts), off = offset_of(counts, g_rank);
                for (size_t i = 0; i < total; i++)
                    put(dt, sendb, i, value(op, g_rank, i));
                for (size_t i = 0; i < counts[g_rank]; i++)
                    want[i] = reduced(op, off + i);
                fill(dt, recvb, MAXN, SENTINEL);
                snprintf(what, sizeof what, "reduce_scatter %s %s counts %s", dt_names[d],
                         op_names[op], pattern ? "k" : "k+1");
                CHECK(cg_tp_reduce_scatter(tp, SITE, sendb, recvb, counts, dt, op) == 0, "%s: %s", what,
                      tp->st.msg);
                expect(what, dt, recvb, counts[g_rank], op == CGT_AVG);
            }
}

/* ---- data movement --------------------------------------------------------- */

/* want[] = every rank's block, concatenated in rank order. */
static size_t want_concatenation(const size_t *counts)
{
    size_t o = 0;
    for (int r = 0; r < g_world; r++)
        for (size_t k = 0; k < counts[r]; k++)
            want[o++] = block_value(r, k);
    return o;
}

static void fill_own_block(cg_dtype dt, size_t n)
{
    for (size_t k = 0; k < n; k++)
        put(dt, sendb, k, block_value(g_rank, k));
}

static void test_gathers(cg_tp *tp)
{
    size_t counts[4];
    char what[96];
    for (int d = 0; d < 4; d++)
        for (int pattern = 0; pattern < 2; pattern++) {
            cg_dtype dt = dtypes[d];
            size_t total = ragged(pattern, counts);
            want_concatenation(counts);
            fill_own_block(dt, counts[g_rank]);
            fill(dt, recvb, MAXN, SENTINEL);
            snprintf(what, sizeof what, "all_gather %s counts %s", dt_names[d], pattern ? "k" : "k+1");
            CHECK(cg_tp_all_gather(tp, SITE, sendb, recvb, counts, dt) == 0, "%s: %s", what, tp->st.msg);
            expect(what, dt, recvb, total, false);
            for (int j = 0; j < n_roots(); j++) {
                int root = root_at(j);
                fill(dt, recvb, MAXN, SENTINEL);
                snprintf(what, sizeof what, "gather %s counts %s root %d", dt_names[d],
                         pattern ? "k" : "k+1", root);
                CHECK(cg_tp_gather(tp, SITE, sendb, recvb, counts, dt, root) == 0, "%s: %s", what,
                      tp->st.msg);
                if (g_rank == root)
                    expect(what, dt, recvb, total, false);
            }
        }
}

static void test_scatter_broadcast(cg_tp *tp)
{
    size_t counts[4];
    char what[96];
    for (int d = 0; d < 4; d++)
        for (int j = 0; j < n_roots(); j++) {
            cg_dtype dt = dtypes[d];
            int root = root_at(j);
            for (int pattern = 0; pattern < 2; pattern++) {
                size_t total = ragged(pattern, counts), off = offset_of(counts, g_rank);
                want_concatenation(counts);
                for (size_t i = 0; i < total; i++)
                    put(dt, sendb, i, g_rank == root ? want[i] : SENTINEL);
                memmove(want, want + off, counts[g_rank] * sizeof *want);
                fill(dt, recvb, MAXN, SENTINEL);
                snprintf(what, sizeof what, "scatter %s counts %s root %d", dt_names[d],
                         pattern ? "k" : "k+1", root);
                CHECK(cg_tp_scatter(tp, SITE, sendb, recvb, counts, dt, root) == 0, "%s: %s", what,
                      tp->st.msg);
                expect(what, dt, recvb, counts[g_rank], false);
            }
            for (size_t k = 0; k < 7; k++) {
                want[k] = block_value(root, k);
                put(dt, recvb, k, g_rank == root ? want[k] : SENTINEL);
            }
            snprintf(what, sizeof what, "broadcast %s root %d", dt_names[d], root);
            CHECK(cg_tp_broadcast(tp, SITE, recvb, 7, dt, root) == 0, "%s: %s", what, tp->st.msg);
            expect(what, dt, recvb, 7, false);
        }
}

/* Rank r sends (r + j) % 3 elements to rank j, so some blocks are empty;
 * element k of the block from r to j is r*32 + j*8 + k + 1. */
static void test_all_to_all(cg_tp *tp)
{
    size_t sendcounts[4], recvcounts[4];
    char what[96];
    for (int d = 0; d < 4; d++) {
        cg_dtype dt = dtypes[d];
        size_t s = 0, r = 0;
        for (int j = 0; j < g_world; j++) {
            sendcounts[j] = (size_t)(g_rank + j) % 3;
            recvcounts[j] = (size_t)(j + g_rank) % 3;
            for (size_t k = 0; k < sendcounts[j]; k++)
                put(dt, sendb, s++, g_rank * 32.0 + j * 8.0 + (double)k + 1.0);
            for (size_t k = 0; k < recvcounts[j]; k++)
                want[r++] = j * 32.0 + g_rank * 8.0 + (double)k + 1.0;
        }
        fill(dt, recvb, MAXN, SENTINEL);
        snprintf(what, sizeof what, "all_to_all %s", dt_names[d]);
        CHECK(cg_tp_all_to_all(tp, SITE, sendb, sendcounts, recvb, recvcounts, dt) == 0, "%s: %s", what,
              tp->st.msg);
        expect(what, dt, recvb, r, false);
    }
}

/* ---- point to point ---------------------------------------------------------- */

/* Each rank sends tags 7 (3 elements) and 8 (5 elements) to the next rank,
 * which receives them in the opposite order, so matching is by tag. Rank 0
 * sends first and the others receive first, so the ring cannot deadlock;
 * receiving tag 8 first relies on MPI buffering the 3-element tag 7 message,
 * which every MPI does for messages this small. */
static void test_ring(cg_tp *tp, cg_dtype dt, const char *name)
{
    int next = (g_rank + 1) % g_world, prev = (g_rank + g_world - 1) % g_world;
    double a[3], b[5];
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) == (g_rank == 0)) {
            for (size_t k = 0; k < 3; k++) put(dt, a, k, block_value(g_rank, k));
            for (size_t k = 0; k < 5; k++) put(dt, b, k, block_value(g_rank, k + 8));
            CHECK(cg_tp_send(tp, SITE, a, 3, dt, next, 7) == 0, "send %s tag 7: %s", name, tp->st.msg);
            CHECK(cg_tp_send(tp, SITE, b, 5, dt, next, 8) == 0, "send %s tag 8: %s", name, tp->st.msg);
        } else {
            CHECK(cg_tp_recv(tp, SITE, b, 5, dt, prev, 8) == 0, "recv %s tag 8: %s", name, tp->st.msg);
            CHECK(cg_tp_recv(tp, SITE, a, 3, dt, prev, 7) == 0, "recv %s tag 7: %s", name, tp->st.msg);
            for (size_t k = 0; k < 5; k++) want[k] = block_value(prev, k + 8);
            expect("ring tag 8", dt, b, 5, false);
            for (size_t k = 0; k < 3; k++) want[k] = block_value(prev, k);
            expect("ring tag 7", dt, a, 3, false);
        }
    }
}

/* Every rank sends 1 MiB to the next before it receives from the previous:
 * sends are buffered (collgrad_transport.h), so this ends; an MPI_Send, which
 * above the eager limit waits for its receiver, waited here forever. The
 * sent buffer is overwritten at once: the transport must have copied it. A
 * second pass sends to itself (its own receive comes only after). */
static void test_large_ring(cg_tp *tp)
{
    enum { N = (1 << 20) / sizeof(double) };
    double *out = malloc(N * sizeof *out), *in = malloc(N * sizeof *in);
    CHECK(out && in, "out of memory for the 1 MiB ring");
    for (int pass = 0; out && in && pass < 2; pass++) {
        int next = pass ? g_rank : (g_rank + 1) % g_world;
        int prev = pass ? g_rank : (g_rank + g_world - 1) % g_world;
        for (size_t i = 0; i < N; i++)
            out[i] = g_rank * 1e6 + (double)i;
        CHECK(cg_tp_send(tp, SITE, out, N, CG_F64, next, 3) == 0, "1 MiB send: %s", tp->st.msg);
        memset(out, 0xff, N * sizeof *out);
        CHECK(cg_tp_recv(tp, SITE, in, N, CG_F64, prev, 3) == 0, "1 MiB recv: %s", tp->st.msg);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += in[i] != prev * 1e6 + (double)i;
        CHECK(bad == 0, "1 MiB ring pass %d: %zu of %d elements wrong", pass, bad, (int)N);
    }
    CHECK(cg_tp_settle(tp) == 0, "settle after the ring: %s", tp->st.msg);
    free(out);
    free(in);
}

static void test_p2p_errors(cg_tp *tp)
{
    float buf[9] = {0};
    const cg_tp_site at42 = {42, false}; /* the program call the messages name */
    if (g_rank == 1) {
        CHECK(cg_tp_send(tp, at42, buf, 4, CG_F32, 0, 7) == 0, "short send: %s", tp->st.msg);
        CHECK(cg_tp_send(tp, at42, buf, 9, CG_F32, 0, 9) == 0, "long send: %s", tp->st.msg);
    } else if (g_rank == 0) {
        CHECK(cg_tp_recv(tp, at42, buf, 9, CG_F32, 1, 7) == -1, "recv of a short message succeeded");
        CHECK(strcmp(tp->st.msg, "recv #42: recv from rank 1 tag 7: expected 9 elements, got 4") == 0,
              "short recv message: '%s'", tp->st.msg);
        CHECK(cg_tp_recv(tp, at42, buf, 4, CG_F32, 1, 9) == -1, "recv of a long message succeeded");
        CHECK(strstr(tp->st.msg, "recv #42: MPI_Recv failed: ") == tp->st.msg,
              "truncated recv message: '%s'", tp->st.msg);
    }
    CHECK(cg_tp_barrier(tp, SITE) == 0, "barrier after p2p errors: %s", tp->st.msg);
}

/* ---- errors found before any MPI call (so every rank fails alike) ----------- */

static void test_local_errors(cg_tp *tp)
{
    size_t counts[4] = {0};
    counts[g_world - 1] = (size_t)INT_MAX + 1;
    CHECK(cg_tp_all_reduce(tp, SITE, sendb, recvb, (size_t)INT_MAX + 1, CG_F32, CGT_SUM) == -1 &&
          strstr(tp->st.msg, "all_reduce #0: count 2147483648 exceeds INT_MAX") == tp->st.msg,
          "huge all_reduce: '%s'", tp->st.msg);
    CHECK(cg_tp_all_gather(tp, SITE, sendb, recvb, counts, CG_F64) == -1 &&
          strstr(tp->st.msg, "INT_MAX") != NULL, "huge all_gather: '%s'", tp->st.msg);
    for (int k = 0; k < g_world; k++)
        counts[k] = (size_t)INT_MAX / 2 + 1;
    if (g_world > 1) /* at W = 1 these counts are legal and would really move 4 GiB */
        CHECK(cg_tp_all_to_all(tp, SITE, sendb, counts, recvb, counts, CG_F32) == -1 &&
              strstr(tp->st.msg, "INT_MAX") != NULL, "all_to_all totalling past INT_MAX: '%s'",
              tp->st.msg);
    CHECK(cg_tp_broadcast(tp, SITE, recvb, 1, CG_F32, g_world) == -1 &&
          strstr(tp->st.msg, "out of range") != NULL, "broadcast root %d: '%s'", g_world, tp->st.msg);
    CHECK(cg_tp_send(tp, SITE, sendb, 1, CG_F32, g_rank, 40000) == -1 &&
          strstr(tp->st.msg, "send #0: tag 40000") == tp->st.msg, "send tag 40000: '%s'", tp->st.msg);
    CHECK(cg_tp_recv(tp, SITE, recvb, 1, CG_F32, -1, 0) == -1 && strstr(tp->st.msg, "peer -1") != NULL,
          "recv from peer -1: '%s'", tp->st.msg);
}

static void test_open_errors(void)
{
    cg_tp bad;
    cg_status st = CG_STATUS_OK;
    CHECK(cg_tp_open(&bad, "x", &st) == -1 && strcmp(st.msg, "unknown transport 'x' (built in: mpi)") == 0,
          "open 'x': '%s'", st.msg);
    CHECK(cg_tp_open(&bad, "./no_such_transport.so", &st) == -1 &&
          strstr(st.msg, "./no_such_transport.so: ") == st.msg, "open missing plugin: '%s'", st.msg);
}

/* ---- counters and the status hook ------------------------------------------- */

static int hook_enters, hook_leaves, hook_uncounted;

static int count_before(void *self, cg_tp *tp, const cg_tp_fingerprint *call)
{
    (void)self;
    hook_enters++;
    hook_uncounted += tp->calls[call->entry] == 0;
    return 0;
}

static void count_after(void *self, cg_tp *tp, const cg_tp_fingerprint *call, int rc)
{
    (void)self, (void)tp, (void)call, (void)rc;
    hook_leaves++;
}

static void run_known_sequence(cg_tp *tp, const size_t *ragged_counts, const size_t *twos)
{
    double buf[MAXN];
    fill(CG_F64, buf, MAXN, 1.0);
    int ok = 0;
    ok += cg_tp_all_reduce(tp, SITE, sendb, recvb, 5, CG_F32, CGT_SUM) == 0;
    ok += cg_tp_all_gather(tp, SITE, sendb, recvb, ragged_counts, CG_F64) == 0;
    ok += cg_tp_reduce_scatter(tp, SITE, buf, recvb, ragged_counts, CG_BF16, CGT_SUM) == 0;
    ok += cg_tp_broadcast(tp, SITE, recvb, 3, CG_F16, 0) == 0;
    ok += cg_tp_reduce(tp, SITE, sendb, recvb, 4, CG_F32, CGT_MAX, 0) == 0;
    ok += cg_tp_gather(tp, SITE, sendb, recvb, ragged_counts, CG_F64, g_world - 1) == 0;
    ok += cg_tp_scatter(tp, SITE, buf, recvb, ragged_counts, CG_F32, 0) == 0;
    ok += cg_tp_all_to_all(tp, SITE, buf, twos, recvb, twos, CG_F32) == 0;
    ok += cg_tp_barrier(tp, SITE) == 0;
    ok += cg_tp_barrier(tp, SITE) == 0;
    CHECK(ok == 10, "known sequence: %d of 10 calls succeeded (%s)", ok, tp->st.msg);
    if (g_world > 1)
        test_ring(tp, CG_F64, "counted ring");
}

static void test_counters(void)
{
    cg_tp tp;
    cg_status st = CG_STATUS_OK;
    if (cg_tp_open(&tp, "mpi", &st) != 0) {
        CHECK(false, "second open: %s", st.msg);
        return;
    }
    size_t counts[4], twos[4] = {2, 2, 2, 2};
    uint64_t t = ragged(0, counts), me = counts[g_rank], w = (uint64_t)g_world;
    CHECK(cg_tp_watch(&tp, (cg_tp_watcher){count_before, count_after, NULL, NULL, NULL}) == 0,
          "watch: %s", tp.st.msg);
    run_known_sequence(&tp, counts, twos);
    tp.nwatchers = 0;
    uint64_t p2p = g_world > 1 ? 2 : 0;
    const uint64_t want_calls[CGT_NCALLS] = {1, 1, 1, 1, 1, 1, 1, 1, p2p, p2p, 2};
    const uint64_t want_bytes[CGT_NCALLS] = {
        [CGT_ALL_REDUCE] = (5 + 5) * 4,
        [CGT_ALL_GATHER] = (me + t) * 8,
        [CGT_REDUCE_SCATTER] = (t + me) * 2,
        [CGT_BROADCAST] = 3 * 2,
        [CGT_REDUCE] = (4 + (g_rank == 0 ? 4 : 0)) * 4,
        [CGT_GATHER] = (me + (g_rank == g_world - 1 ? t : 0)) * 8,
        [CGT_SCATTER] = ((g_rank == 0 ? t : 0) + me) * 4,
        [CGT_ALL_TO_ALL] = (2 * w + 2 * w) * 4,
        [CGT_SEND] = p2p ? (3 + 5) * 8 : 0,
        [CGT_RECV] = p2p ? (5 + 3) * 8 : 0,
        [CGT_BARRIER] = 0,
    };
    for (int e = 0; e < CGT_NCALLS; e++) {
        CHECK(tp.calls[e] == want_calls[e], "calls[%s] = %llu, want %llu",
              cg_tp_entry_name((cg_tp_entry)e), (unsigned long long)tp.calls[e],
              (unsigned long long)want_calls[e]);
        CHECK(tp.bytes[e] == want_bytes[e], "bytes[%s] = %llu, want %llu",
              cg_tp_entry_name((cg_tp_entry)e), (unsigned long long)tp.bytes[e],
              (unsigned long long)want_bytes[e]);
    }
    int n = 10 + 2 * (int)p2p;
    CHECK(hook_enters == n && hook_leaves == n && hook_uncounted == 0,
          "hook: %d enters, %d leaves, %d before counting; want %d, %d, 0", hook_enters,
          hook_leaves, hook_uncounted, n, n);
    cg_tp_close(&tp);
}

/* ---- main ------------------------------------------------------------------- */

/* Process groups (split): ranks by parity, rank 0 left out at W > 2 (color
 * -1). Each group's all_reduce sums its members' global ranks, by hand: at
 * W = 4 the odd group {1, 3} gets 4 and the even group {2} gets 2; the
 * handle's rank and world are the place in the group; a non-member gets no
 * handle; the group's calls follow the parent's watcher (split callback). */
static int split_seen;
static int follow(void *self, cg_tp *tp, int color, int key, cg_tp_watcher *child)
{
    (void)self, (void)tp, (void)color, (void)key, (void)child;
    split_seen++;
    return 0;
}

static void test_split(cg_tp *tp)
{
    int color = g_world > 2 && g_rank == 0 ? -1 : g_rank % 2;
    cg_tp *g = NULL;
    tp->watchers[tp->nwatchers++] = (cg_tp_watcher){NULL, NULL, NULL, follow, NULL};
    CHECK(cg_tp_split(tp, color, g_rank, &g) == 0, "split: %s", tp->st.msg);
    tp->nwatchers--;
    CHECK(split_seen == 1, "the watcher saw %d splits, expected 1", split_seen);
    if (color < 0) {
        CHECK(g == NULL, "rank 0 (color -1) got a handle");
        return;
    }
    int size = 0, mine = 0;
    for (int r = 0; r < g_world; r++)
        if (!(g_world > 2 && r == 0) && r % 2 == color) {
            mine += r < g_rank;
            size++;
        }
    CHECK(g && g->world == size && g->rank == mine,
          "group handle: world %d rank %d, expected %d %d", g ? g->world : -1, g ? g->rank : -1,
          size, mine);
    double x = g_rank, sum = 0;
    for (int r = 0; r < g_world; r++)
        sum += !(g_world > 2 && r == 0) && r % 2 == color ? r : 0;
    CHECK(g && cg_tp_all_reduce(g, SITE, &x, &x, 1, CG_F64, CGT_SUM) == 0, "group all_reduce: %s",
          g ? g->st.msg : "no handle");
    CHECK(x == sum, "group all_reduce gave %g, expected %g", x, sum);
    cg_tp_free_split(g);
    /* a table without split: refused by name, nothing made (no collective runs) */
    cg_transport_ops none = *tp->ops;
    none.name = "nosplit";
    none.split = NULL;
    cg_tp bare = *tp;
    bare.ops = &none;
    bare.nwatchers = 0;
    g = NULL;
    CHECK(cg_tp_split(&bare, color, g_rank, &g) == -1 && g == NULL &&
              strcmp(bare.st.msg,
                     "transport 'nosplit' has no process groups (its table leaves split NULL)") ==
                  0,
          "a transport without split: '%s'", bare.st.msg);
}

static void test_identity(const cg_tp *tp)
{
    CHECK(tp->rank == g_rank && tp->world == g_world, "rank/world %d/%d, MPI says %d/%d",
          tp->rank, tp->world, g_rank, g_world);
    CHECK(strcmp(tp->ops->name, "mpi") == 0 && tp->ops->version[0] != '\0' &&
          tp->ops->caps == (CGT_CAP_HOST | CGT_CAP_HALF),
          "identity: name '%s' version '%s' caps %#x", tp->ops->name, tp->ops->version,
          tp->ops->caps);
    CHECK(strcmp(cg_tp_entry_name(CGT_REDUCE_SCATTER), "reduce_scatter") == 0 &&
          strcmp(cg_tp_entry_name(CGT_BARRIER), "barrier") == 0, "entry names");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world);
    cg_tp tp;
    cg_status st = CG_STATUS_OK;
    if (g_world > 4) {
        CHECK(false, "run with at most 4 ranks, not %d", g_world);
    } else if (cg_tp_open(&tp, "mpi", &st) != 0) {
        CHECK(false, "open mpi: %s", st.msg);
    } else {
        test_identity(&tp);
        test_reductions(&tp);
        test_reduce_in_pieces(&tp);
        test_reduce_scatter(&tp);
        test_gathers(&tp);
        test_scatter_broadcast(&tp);
        test_all_to_all(&tp);
        test_split(&tp);
        if (g_world > 1) {
            test_ring(&tp, CG_BF16, "bf16");
            test_large_ring(&tp);
            test_p2p_errors(&tp);
        }
        test_local_errors(&tp);
        test_open_errors();
        test_counters();
        CHECK(cg_tp_barrier(&tp, SITE) == 0, "final barrier: %s", tp.st.msg);
        cg_tp_close(&tp);
    }
    int mine[2] = {g_pass, g_fail}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("mpitest_transport -n %d: %d passed, %d failed\n", g_world, all[0], all[1]);
    MPI_Finalize();
    return all[1] == 0 ? 0 : 1;
}
