/* fdcheck.c — the third opinion: a central finite difference of the global
 * function F = sum_k L_k in f64, compared with the oracle's analytic
 * per-rank gradient, like torch.autograd.gradcheck.
 *
 * Each element costs two full re-runs of the simulated program, so large
 * tensors are sampled (at most FD_SAMPLES evenly spaced elements). The step
 * is h = 1e-5 * max(1, |x|): the truncation error h^2 |F'''| / 6 and the
 * rounding error eps |F| / h then both stay far below the tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "oracle.h"

enum { FD_SAMPLES = 16 };
static const double FD_TOLERANCE = 1e-6;

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

/* |fd - g| / (1 + |g|): relative for large gradients, absolute near zero,
 * where a relative error means nothing (58005 ronghanghu's gradient is 0).
 * The same test as the check's atol = rtol = tolerance. */
static double fd_error(double analytic, double fd)
{
    return fabs(fd - analytic) / (1.0 + fabs(analytic));
}

int cg_oracle_fdcheck(const cg_case *cs, cg_oracle *o)
{
    char err[CG_ERR_LEN] = "";
    o->fd_tolerance = FD_TOLERANCE;
    o->fd_max_rel_err = 0.0;
    for (int i = 0; i < o->ntensors; i++) {
        cg_otensor *t = &o->tensors[i];
        if (!fd_wanted(cs, t) || t->numel == 0)
            continue;
        if (!(t->fd = calloc((size_t)t->numel, sizeof *t->fd)))
            return 3;
        for (int64_t e = 0; e < t->numel; e++)
            t->fd[e] = NAN; /* not sampled */
        int64_t step = t->numel > FD_SAMPLES ? (t->numel + FD_SAMPLES - 1) / FD_SAMPLES : 1;
        for (int64_t e = 0; e < t->numel; e += step) {
            double h = 1e-5 * fmax(1.0, fabs(t->value[e]));
            cg_perturb p = {t->rank, t->stmt, t->name, e, h};
            double fp = cg_oracle_objective(cs, o->world, &p, err, sizeof err);
            p.delta = -h;
            double fm = cg_oracle_objective(cs, o->world, &p, err, sizeof err);
            if (isnan(fp) || isnan(fm)) { /* a run that failed says why; a NaN objective does not */
                snprintf(o->error, sizeof o->error, "finite difference run failed: %s",
                         err[0] ? err : "the objective is NaN at the perturbed point");
                return 2;
            }
            t->fd[e] = (fp - fm) / (2.0 * h);
            t->fd_checked++;
            o->fd_max_rel_err = fmax(o->fd_max_rel_err, fd_error(t->per_rank[e], t->fd[e]));
        }
    }
    o->fd_ran = true;
    o->fd_skip_reason[0] = '\0';
    return 0;
}
