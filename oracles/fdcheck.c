/* fdcheck.c — the third opinion: a central finite difference of the global
 * function F = sum_k L_k in f64, compared with the oracle's analytic
 * per-rank gradient, like torch.autograd.gradcheck.
 *
 * Each element costs four full re-runs of the simulated program (x +- h,
 * x +- 2h), so large tensors are sampled (at most FD_SAMPLES evenly spaced
 * elements). The step is h = 1e-5 max(1, |x|). The central difference
 * D(h) = (F(x+h) - F(x-h)) / 2h errs by
 *   truncation  h^2 F''' / 6 + O(h^4), estimated by Richardson from the same
 *               runs: D(2h) - D(h) = 3 (h^2 F''' / 6) + O(h^4), so
 *               T = |D(2h) - D(h)| / 3;
 *   rounding    the objective is a sum of many f64 terms, each run's F off by
 *               up to about eps |F|, so R = eps (|F(x+h)| + |F(x-h)|) / 2h.
 * An element may err by FD_TOLERANCE (1 + |g|) + 8 (T + R): the floor is
 * gradcheck's, the rest grows with |F|, 1/h and F''' exactly as the errors
 * do (a tolerance fixed at 1e-6 failed correct gradients once W^2 N passed
 * about 1e6). A tensor's check uses the widest relative tolerance its
 * sampled elements need, allowed / (1 + |g|). Neither estimate reads the
 * analytic gradient, so widening the tolerance for a large objective can
 * never hide a wrong g whose error exceeds what the arithmetic explains. The
 * element furthest past (or closest to) its tensor's bound is kept, with the
 * step and both estimates, for the report to name. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "oracle.h"
#include "cancel.h"

enum { FD_SAMPLES = 16 };
static const double FD_TOLERANCE = 1e-6;
static const double FD_SAFETY = 8.0; /* how far past the estimates an error may go */

/* Which tensors deserve a finite difference: every param, and every tensor
 * named in a grad expectation. */
static bool fd_wanted(const cg_case *cs, const cg_otensor *t)
{
    if (t->is_param)
        return true;
    for (int i = 0; i < cs->nexpects; i++)
        if (cs->expects[i]->kind == CG_X_GRAD && strcmp(cs->expects[i]->tensor, t->name) == 0)
            return true;
    return false;
}

/* F at x[e] + delta: NAN with st on failure. */
static double objective_at(const cg_case *cs, const cg_oracle *o, const cg_otensor *t, int64_t e,
                           double delta, cg_status *st)
{
    cg_perturb p = {t->rank, t->stmt, t->name, e, delta};
    return cg_oracle_objective(cs, o->world, &p, &o->deadline, st);
}

/* One element's central difference and its error estimates. 0, or 2 with
 * o->st.msg when a run fails, 3 when interrupted. */
static int difference(const cg_case *cs, cg_oracle *o, const cg_otensor *t, int64_t e, double *fd,
                      cg_fd_element *est)
{
    cg_status st = CG_STATUS_OK;
    double h = 1e-5 * fmax(1.0, fabs(t->value[e])), f[4];
    const double at[4] = {h, -h, 2 * h, -2 * h};
    for (int i = 0; i < 4; i++) {
        f[i] = objective_at(cs, o, t, e, at[i], &st);
        if (cg_cancelled(
                &o->deadline)) { /* each step re-runs the whole program: a stop ends them */
            char why[128];
            cg_error_infra(&o->st, "%s", cg_cancel_reason(&o->deadline, why, sizeof why));
            return CG_EXIT_INFRA;
        }
        if (isnan(f[i])) { /* a run that failed says why; a NaN objective does not */
            cg_error(&o->st, "finite difference run failed: %s",
                     st.msg[0] ? st.msg : "the objective is NaN at the perturbed point");
            return CG_EXIT_USAGE;
        }
    }
    double d1 = (f[0] - f[1]) / (2 * h), d2 = (f[2] - f[3]) / (4 * h);
    *fd = d1;
    est->step = h;
    est->truncation = fabs(d2 - d1) / 3.0;
    est->rounding = DBL_EPSILON * (fabs(f[0]) + fabs(f[1])) / (2 * h);
    return 0;
}

int cg_oracle_fdcheck(const cg_case *cs, cg_oracle *o)
{
    o->fd_tolerance = FD_TOLERANCE;
    o->fd_max_rel_err = 0.0;
    double worst = -1.0; /* error / bound of the element kept in fd_worst */
    for (int i = 0; i < o->ntensors; i++) {
        cg_otensor *t = &o->tensors[i];
        if (!fd_wanted(cs, t) || t->numel == 0)
            continue;
        int64_t stride = t->numel > FD_SAMPLES ? (t->numel + FD_SAMPLES - 1) / FD_SAMPLES : 1;
        cg_fd_element *est = calloc(FD_SAMPLES + 1, sizeof *est);
        if (!est || !(t->fd = calloc((size_t)t->numel, sizeof *t->fd))) {
            free(est);
            return CG_EXIT_INFRA;
        }
        for (int64_t e = 0; e < t->numel; e++)
            t->fd[e] = NAN; /* not sampled */
        int n = 0;
        t->fd_tolerance = FD_TOLERANCE;
        for (int64_t e = 0; e < t->numel; e += stride, n++) {
            int rc = difference(cs, o, t, e, &t->fd[e], &est[n]);
            if (rc != 0) {
                free(est);
                return rc;
            }
            t->fd_checked++;
            double g = t->per_rank[e], scale = 1.0 + fabs(g);
            est[n].allowed = FD_TOLERANCE * scale + FD_SAFETY * (est[n].truncation + est[n].rounding);
            est[n].index = e;
            est[n].analytic = g;
            est[n].fd = t->fd[e];
            t->fd_tolerance = fmax(t->fd_tolerance, est[n].allowed / scale);
            o->fd_max_rel_err = fmax(o->fd_max_rel_err, fabs(t->fd[e] - g) / scale);
        }
        for (int k = 0; k < n; k++) { /* judged as the check will judge it: the tensor's tolerance */
            double ratio = fabs(est[k].fd - est[k].analytic) / (t->fd_tolerance * (1.0 + fabs(est[k].analytic)));
            if (ratio > worst) {
                worst = ratio;
                o->fd_worst = est[k];
                o->fd_worst.rank = t->rank;
                snprintf(o->fd_worst.tensor, sizeof o->fd_worst.tensor, "%s", t->name);
            }
        }
        o->fd_tolerance = fmax(o->fd_tolerance, t->fd_tolerance);
        free(est);
    }
    o->fd_ran = true;
    o->fd_skip_reason[0] = '\0';
    o->fd_failed = worst > 1.0;
    return 0;
}
