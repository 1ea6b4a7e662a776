/* bench_check.c — the bench's correctness check (bench.h).
 *
 * The bench program is x = param(ones(n) * (rank + 1)); y = COLL(x);
 * backward(y). Its input is one constant per rank, so every tensor of the
 * program is constant on each block of `scale` consecutive elements (a block
 * of a gather's output is one rank's input, a block of a reduce_scatter's
 * input is one rank's share), and the same program at n / scale elements has,
 * element for element, the values and gradients of those blocks. The oracle
 * runs that small program (W * n / scale elements in all, whatever n is), and
 * each rank compares its own y and x.grad of a timed iteration with it,
 * streaming over its elements: no rank's tensors travel, no copy of them is
 * made, and the check costs one pass over memory the iteration already
 * holds. (The full-size oracle took 30 s and 6.2 GB at 64 MiB, W = 4, and
 * refused the size: more elements than a case may hold.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "expect.h"
#include "oracle.h"
#include "result.h"

cg_case *cg_bench_program(const cg_bench_opts *o, int world, int64_t n, cg_status *st)
{
    char text[512], call[64];
    cg_bench_call(o, call, sizeof call);
    /* a case declares the worlds it is launched at (1..CG_MAX_WORLD); the
     * oracle runs it at any world it is given, the bench's up to
     * CG_MAX_SIM_WORLD, so a larger one declares 1, never launched */
    snprintf(text, sizeof text,
             "case bench_%s\nworlds %d\ndtype %s\nx = param(ones(%lld) * (rank + 1))\ny = %s\n"
             "backward(y)\n",
             cg_coll_name(o->coll), world <= CG_MAX_WORLD ? world : 1, cg_dtype_name(o->dtype),
             (long long)n, call);
    cg_case *cs = cg_parse_case("bench.case", text, strlen(text), st);
    if (cs) /* sized by -b/-e, not untrusted: no element limits (0 = none, tensor.h) */
        cs->limits.value_elements = cs->limits.case_elements = 0;
    return cs;
}

/* Elements per block of the program at n_in input elements per rank: a
 * split input's share (n_in / W: reduce_scatter's, all_to_all's), else the
 * whole input (an elementwise output, or one rank's block of a gathered one). */
static int64_t block_of(const cg_bench_opts *o, int world, int64_t n_in)
{
    cg_shape_rule rule = cg_collective_of(o->coll)->shape;
    bool splits = rule == CG_SHAPE_BLOCK || rule == CG_SHAPE_BLOCKS;
    return splits && n_in % world == 0 ? n_in / world : n_in;
}

/* A copy of rank's `name` from o: its value or its per_rank gradient. */
static double *copy_of(const cg_oracle *o, const char *name, int rank, bool grad, int64_t *n)
{
    const cg_otensor *t = cg_oracle_find(o, name, rank);
    if (!t)
        return NULL;
    double *v = malloc(((size_t)t->numel + 1) * sizeof *v);
    if (v)
        memcpy(v, grad ? t->per_rank : t->value, (size_t)t->numel * sizeof *v);
    *n = t->numel;
    return v;
}

int cg_bench_truth_make(const cg_bench_opts *o, int world, int rank, int64_t n_in, cg_bench_truth *t,
                        cg_status *st)
{
    memset(t, 0, sizeof *t);
    t->scale = block_of(o, world, n_in);
    cg_case *cs = cg_bench_program(o, world, n_in / t->scale, st);
    if (!cs)
        return -1;
    t->tol = cg_case_tol(cs, cg_tol_for(cs->dtype));
    cg_oracle *orc = cg_oracle_run(cs, world, false);
    int rc = -1;
    if (!orc)
        cg_error_infra(st, "out of memory for the oracle");
    else if (orc->st.code)
        cg_error(st, "the oracle: %s", orc->st.msg);
    else if (!(t->y = copy_of(orc, "y", rank, false, &t->ny)) ||
             !(t->gx = copy_of(orc, "x", rank, true, &t->nx)))
        cg_error_infra(st, "out of memory for the oracle's answer");
    else
        rc = 0;
    cg_oracle_free(orc);
    cg_case_free(cs);
    if (rc != 0)
        cg_bench_truth_free(t);
    return rc;
}

void cg_bench_truth_free(cg_bench_truth *t)
{
    free(t->y);
    free(t->gx);
    memset(t, 0, sizeof *t);
}

/* Compare what (NULL: zeros, as a gradient that never arrived) with the
 * truth want[e / scale], CHUNK elements at a time (cg_compare's rules: the
 * report's). 0, or -1 with st naming the first element off. */
enum { CHUNK = 4096 };
static int compare(const cg_bench_truth *t, const char *name, const cg_tensor *what, int64_t numel,
                   const double *want, int64_t nwant, cg_status *st)
{
    if (numel != nwant * t->scale)
        return cg_error(st, "%s has %lld elements, the oracle's %lld x %lld", name, (long long)numel,
                        (long long)nwant, (long long)t->scale);
    double e[CHUNK], g[CHUNK];
    for (int64_t at = 0; at < numel; at += CHUNK) {
        int64_t n = numel - at < CHUNK ? numel - at : CHUNK;
        for (int64_t i = 0; i < n; i++) {
            e[i] = want[(at + i) / t->scale];
            g[i] = what ? cg_get(what, at + i) : 0.0;
        }
        double max_abs, max_rel, max_ulp;
        int64_t bad;
        if (cg_compare(e, g, n, t->tol, &max_abs, &max_rel, &max_ulp, &bad) != CG_PASS)
            return cg_error(st, "%s[%lld] = %.17g, the oracle says %.17g", name, (long long)(at + bad),
                            g[bad], e[bad]);
    }
    return 0;
}

int cg_bench_truth_check_y(const cg_bench_truth *t, const cg_tensor *y, cg_status *st)
{
    if (!y)
        return cg_error(st, "the collective gave no output");
    return compare(t, "y", y, y->numel, t->y, t->ny, st);
}

int cg_bench_truth_check_grad(const cg_bench_truth *t, const cg_tensor *gx, int64_t numel, cg_status *st)
{
    return compare(t, "x.grad", gx, numel, t->gx, t->nx, st);
}

int cg_bench_truth_check(const cg_bench_truth *t, const cg_tensor *x, const cg_tensor *y, cg_status *st)
{
    CG_TRY(cg_bench_truth_check_y(t, y, st));
    return cg_bench_truth_check_grad(t, x->grad, x->numel, st);
}
