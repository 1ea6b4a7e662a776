/* semantics.c — the oracle's gradients from one simulated run (sim_run.h).
 *
 * Let L_k be the sum of rank k's roots and K the ranks that have roots.
 *
 *   per_rank    d(sum_k L_k)/dx_r: ONE backward pass seeded at every root.
 *   replicated  per_rank / |K|, defined when every L_k has the same gradient
 *               G on the params. Testing that does not need the W per-root
 *               gradients G_k: a SECOND pass of sum_k w_k L_k with weights
 *               w_k = sqrt(p_k) (p_k the k-th prime; seeds, not ops) gives sum_k w_k G_k,
 *               which equals (sum_k w_k / |K|) per_rank exactly when the G_k
 *               agree. The square roots of distinct primes are linearly
 *               independent over the rationals, so no pattern of per-root
 *               differences that the case language produces cancels out.
 *   own_loss    dL_r/dx_r and per_root dL_k/dx_r need a pass per root rank
 *               and a copy per rank: W^2 N. They are made only on request
 *               (cg_oracle_add_per_root, an own_loss expectation, a diagnosis
 *               or --explain), so the plain oracle is linear in W N.
 *
 * Tensors downstream of a collective differ per root by construction (rank
 * k's loss reads only rank k's copy), so only params decide "replicated". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "sim_run.h"

static double *zeros(int64_t n) { return calloc((size_t)n + 1, sizeof(double)); }

static const cg_tensor *bound(const cg_sim_run *R, const cg_otensor *ot)
{
    const cg_binding *b = cg_interp_lookup(R->I, ot->rank, ot->name);
    return b ? b->t : NULL;
}

/* grad[e] of every oracle tensor after a pass, through fn(ot, e, g, arg). */
typedef void (*grad_sink)(cg_otensor *ot, int64_t e, double g, void *arg);

/* A replicated tensor of R (interp.h cg_share) is read once, through the
 * otensor that holds it: each of its ranks' gradient is its gradient /
 * replicas, since every use of it was shared alike. */
static void read_grads(cg_oracle *o, const cg_sim_run *R, grad_sink sink, void *arg)
{
    for (int i = 0; i < o->ntensors; i++) {
        cg_otensor *ot = &o->tensors[i];
        const cg_tensor *t = bound(R, ot);
        bool replicated = t && t->replicas > 1;
        if (replicated && ot->holder)
            continue;
        double per = replicated ? 1.0 / t->replicas : 1.0;
        const cg_tensor *gr = t ? t->grad : NULL;
        for (int64_t e = 0; e < ot->numel; e++)
            sink(ot, e, gr ? per * cg_get(gr, e) : 0.0, arg);
    }
}

/* One backward pass from `roots` (seeded with weight[i], or 1 when weight is
 * NULL), with the graph's earlier grads dropped. 0, or 2 with st. */
static int pass(const cg_sim_run *R, cg_tensor *const *roots, const double *weight, int n, cg_status *st)
{
    cg_zero_grad(R->g);
    if (n > 0 && cg_backward_weighted(R->g, roots, weight, n) != 0) {
        const cg_status *gs = cg_graph_status(R->g);
        cg_error(st, "backward: %s", gs->msg);
        return gs->code ? gs->code : CG_EXIT_USAGE;
    }
    return 0;
}

/* Every rank's roots, and (when rank_weight is not NULL) each root's seed:
 * its rank's weight. Returns a malloc'd array of *n roots, *seeds set to a
 * malloc'd array of n weights when asked, or NULL when out of memory. */
static cg_tensor **all_roots(const cg_sim_run *R, int world, const double *rank_weight, double **seeds,
                             int *n)
{
    int total = 0;
    for (int k = 0; k < world; k++) {
        cg_tensor *const *roots;
        total += cg_sim_roots(R->sim, k, &roots);
    }
    cg_tensor **all = calloc((size_t)total + 1, sizeof *all);
    double *w = rank_weight ? calloc((size_t)total + 1, sizeof *w) : NULL;
    if (!all || (rank_weight && !w)) {
        free(all);
        free(w);
        return NULL;
    }
    *n = 0;
    for (int k = 0; k < world; k++) {
        cg_tensor *const *roots;
        int nk = cg_sim_roots(R->sim, k, &roots);
        for (int i = 0; i < nk; i++) {
            if (w)
                w[*n] = rank_weight[k];
            all[(*n)++] = roots[i];
        }
    }
    if (seeds)
        *seeds = w;
    return all;
}

/* Pass one's gradients as every otensor's per_rank: a tensor's own f64
 * gradient where it is (the oracle keeps the run; later passes make new
 * gradient tensors and leave these alone), a replicated one's divided by its
 * replicas there first, zeros where none arrived. 0, or -1 when out of
 * memory. */
static int take_per_rank(cg_oracle *o, const cg_sim_run *R)
{
    for (int i = 0; i < o->ntensors; i++) {
        cg_otensor *ot = &o->tensors[i];
        if (ot->holder) { /* the holder came first */
            ot->per_rank = ot->holder->per_rank;
            continue;
        }
        const cg_tensor *t = bound(R, ot), *gr = t ? t->grad : NULL;
        int replicas = t && t->replicas > 1 ? t->replicas : 1;
        if (gr && gr->dtype == CG_F64 && !gr->on_device && gr->numel == ot->numel) {
            ot->per_rank = (double *)gr->data;
            ot->per_rank_in_run = true;
            for (int64_t e = 0; replicas > 1 && e < ot->numel; e++)
                ot->per_rank[e] /= replicas;
            continue;
        }
        if (!(ot->per_rank = zeros(ot->numel)))
            return -1;
        for (int64_t e = 0; gr && e < ot->numel; e++)
            ot->per_rank[e] = cg_get(gr, e) / replicas;
    }
    return 0;
}

/* The replicated test: the largest |weighted - c * per_rank| on the params,
 * and the scale it is judged against. */
typedef struct weighted_cmp {
    double c, maxdiff, scale;
} weighted_cmp;

static void sink_weighted(cg_otensor *ot, int64_t e, double g, void *arg)
{
    weighted_cmp *w = arg;
    if (!ot->is_param)
        return;
    w->maxdiff = fmax(w->maxdiff, fabs(g - w->c * ot->per_rank[e]));
    w->scale = fmax(w->scale, fabs(g));
}

/* w[k] = sqrt of the k-th prime for k < n: the weights of the second pass.
 * One sieve: the 1024th prime is 8161. 0, or -1 when out of memory. */
static int prime_sqrts(double *w, int n)
{
    int limit = 16;
    while (limit < 2 * n * 16) /* p_n < n (ln n + ln ln n) < 32 n for n >= 1 */
        limit *= 2;
    char *composite = calloc((size_t)limit, 1);
    if (!composite)
        return -1;
    int found = 0;
    for (int p = 2; p < limit && found < n; p++) {
        if (composite[p])
            continue;
        w[found++] = sqrt((double)p);
        for (long m = (long)p * p; m < limit; m += p)
            composite[m] = 1;
    }
    free(composite);
    return found == n ? 0 : -1;
}

static int count_root_ranks(cg_oracle *o, const cg_sim_run *R, int *first)
{
    int n = 0;
    *first = -1;
    for (int k = 0; k < o->world; k++) {
        cg_tensor *const *roots;
        if (cg_sim_roots(R->sim, k, &roots) > 0 && n++ == 0)
            *first = k;
    }
    return n;
}

/* Whether every rank with roots has the same ones, tensor for tensor: then
 * every L_k is one function (its roots replicated values, interp.h
 * cg_share), the per-root gradients agree by construction, and the second
 * pass, a seed and a gradient per param more, is not needed. */
static bool same_roots_everywhere(const cg_oracle *o, const cg_sim_run *R)
{
    cg_tensor *const *first = NULL;
    int nfirst = -1;
    for (int k = 0; k < o->world; k++) {
        cg_tensor *const *roots;
        int n = cg_sim_roots(R->sim, k, &roots);
        if (n == 0)
            continue;
        if (nfirst < 0) {
            first = roots;
            nfirst = n;
        } else if (n != nfirst || memcmp(roots, first, (size_t)n * sizeof *roots) != 0) {
            return false;
        }
    }
    return true;
}

/* Decide whether replicated is defined (second pass) and say why. */
static int judge_replicated(cg_oracle *o, const cg_sim_run *R, int first_rank, cg_status *st)
{
    if (o->nroot_ranks == 0) {
        snprintf(o->replicated_reason, sizeof o->replicated_reason, "no rank called backward");
        return 0;
    }
    if (o->nroot_ranks == 1) {
        o->replicated_defined = true;
        snprintf(o->replicated_reason, sizeof o->replicated_reason, "one rank has roots (rank %d)",
                 first_rank);
        return 0;
    }
    if (same_roots_everywhere(o, R)) {
        o->replicated_defined = true;
        snprintf(o->replicated_reason, sizeof o->replicated_reason,
                 "the %d ranks' roots are the same replicated tensors", o->nroot_ranks);
        return 0;
    }
    double *weight = calloc((size_t)o->world, sizeof *weight), wsum = 0.0;
    if (!weight || prime_sqrts(weight, o->world) != 0) {
        free(weight);
        return CG_EXIT_INFRA;
    }
    for (int k = 0; k < o->world; k++) {
        cg_tensor *const *roots;
        if (cg_sim_roots(R->sim, k, &roots) > 0)
            wsum += weight[k];
    }
    int n;
    double *seeds = NULL;
    cg_tensor **roots = all_roots(R, o->world, weight, &seeds, &n);
    free(weight);
    if (!roots)
        return CG_EXIT_INFRA;
    int rc = pass(R, roots, seeds, n, st);
    free(roots);
    free(seeds);
    if (rc != 0)
        return rc;
    weighted_cmp w = {wsum / o->nroot_ranks, 0.0, 1.0};
    read_grads(o, R, sink_weighted, &w);
    o->replicated_defined = w.maxdiff <= 1e-9 * w.scale;
    if (o->replicated_defined)
        snprintf(o->replicated_reason, sizeof o->replicated_reason,
                 "the %d ranks' roots give the same gradients on every param", o->nroot_ranks);
    else /* maxdiff / max_k w_k bounds from below how far two ranks' gradients differ */
        snprintf(o->replicated_reason, sizeof o->replicated_reason,
                 "the ranks' roots are different functions (a weighted sum of their losses moves the "
                 "params' gradients by up to %.6g)", w.maxdiff / wsum);
    return 0;
}

int cg_oracle_derive(cg_oracle *o, const cg_sim_run *R, cg_status *st)
{
    int first_rank, n;
    o->nroot_ranks = count_root_ranks(o, R, &first_rank);
    cg_tensor **roots = all_roots(R, o->world, NULL, NULL, &n);
    if (!roots)
        return CG_EXIT_INFRA;
    int rc = pass(R, roots, NULL, n, st);
    free(roots);
    if (rc != 0)
        return rc;
    if (take_per_rank(o, R) != 0)
        return CG_EXIT_INFRA;
    if ((rc = judge_replicated(o, R, first_rank, st)) != 0)
        return rc;
    for (int i = 0; o->replicated_defined && i < o->ntensors; i++) {
        cg_otensor *ot = &o->tensors[i];
        if (ot->holder) { /* a replicated tensor's: its holder's */
            ot->replicated = ot->holder->replicated;
            continue;
        }
        if (!(ot->replicated = zeros(ot->numel)))
            return CG_EXIT_INFRA;
        for (int64_t e = 0; e < ot->numel; e++)
            ot->replicated[e] = ot->per_rank[e] / o->nroot_ranks;
    }
    return 0;
}

static void sink_per_root(cg_otensor *ot, int64_t e, double g, void *arg)
{
    int k = *(const int *)arg;
    ot->per_root[k][e] = g;
    if (ot->rank == k)
        ot->own_loss[e] = g;
}

int cg_oracle_derive_per_root(cg_oracle *o, const cg_sim_run *R, cg_status *st)
{
    for (int i = 0; i < o->ntensors; i++) {
        cg_otensor *ot = &o->tensors[i];
        if ((!ot->own_loss && !(ot->own_loss = zeros(ot->numel))) ||
            (!ot->per_root && !(ot->per_root = calloc((size_t)o->world, sizeof *ot->per_root))))
            return CG_EXIT_INFRA;
    }
    for (int k = 0; k < o->world; k++) {
        cg_tensor *const *roots;
        int n = cg_sim_roots(R->sim, k, &roots);
        if (n == 0)
            continue;
        for (int i = 0; i < o->ntensors; i++) {
            cg_otensor *ot = &o->tensors[i];
            if (!ot->per_root[k] && !(ot->per_root[k] = zeros(ot->numel)))
                return CG_EXIT_INFRA;
        }
        int rc = pass(R, roots, NULL, n, st);
        if (rc != 0)
            return rc;
        read_grads(o, R, sink_per_root, &k);
    }
    return 0;
}
