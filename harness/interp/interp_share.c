/* interp_share.c — replicated values (interp.h, cg_share): an op evaluated
 * once for every slot whose operands are the same, and the check that keeps
 * the per-rank gradients of such a value exact.
 *
 * Operands are compared by identity: the same tensor (pointer) or the same
 * number. Two slots can hold the same tensor only through sharing, so a
 * group of slots with the same operands is a group of replicas; an operand
 * shared by m slots is used symmetrically when the group using it has all m
 * of them. Anything else (a group of fewer, a slot computing alone on it) is
 * a broken symmetry, recorded for the oracle to run again unshared, unless
 * the value is a constant: no gradient reaches it, so no rank's can differ. */
#include "interp_internal.h"

#include <string.h>

/* Distinct operand tuples searched per op: past this many, a slot computes
 * alone (correct, only unshared). */
#define MAX_LEADERS 16

static bool same_val(const cg_val *a, const cg_val *b)
{
    if (a->is_tensor != b->is_tensor)
        return false;
    return a->is_tensor ? a->t == b->t : a->s == b->s;
}

static bool same_operands(const cg_val *args, int nargs, size_t stride, int a, int b)
{
    for (int i = 0; i < nargs; i++)
        if (!same_val(&args[(size_t)i * stride + (size_t)a], &args[(size_t)i * stride + (size_t)b]))
            return false;
    return true;
}

bool cg_share_active(const cg_interp *I) { return I->share && I->share->on && !I->has_perturb; }

void cg_share_plan(const cg_interp *I, const cg_val *args, int nargs, size_t stride, int *leader)
{
    int leaders[MAX_LEADERS], nleaders = 0;
    bool on = cg_share_active(I);
    for (int s = 0; s < I->nslots; s++) {
        leader[s] = s;
        if (!I->active[s] || !on)
            continue;
        for (int k = 0; k < nleaders && leader[s] == s; k++)
            if (same_operands(args, nargs, stride, leaders[k], s))
                leader[s] = leaders[k];
        if (leader[s] == s && nleaders < MAX_LEADERS)
            leaders[nleaders++] = s;
    }
}

void cg_share_finish(cg_interp *I, const cg_val *args, int nargs, size_t stride, const int *leader,
                     cg_val *out)
{
    if (!cg_share_active(I))
        return;
    int *count = I->share_count; /* nslots ints, zeroed here */
    memset(count, 0, (size_t)I->nslots * sizeof *count);
    for (int s = 0; s < I->nslots; s++)
        if (I->active[s])
            count[leader[s]]++;
    for (int s = 0; s < I->nslots; s++) {
        if (!I->active[s])
            continue;
        int m = count[leader[s]];
        for (int i = 0; i < nargs; i++) {
            const cg_val *v = &args[(size_t)i * stride + (size_t)s];
            if (v->is_tensor && v->t && v->t->replicas > 1 && v->t->replicas != m &&
                v->t->requires_grad) /* a constant's gradient is nobody's */
                cg_share_break(I->share, "a replicated value used by some of its ranks only");
        }
        if (leader[s] != s)
            out[s] = out[leader[s]];
        else if (m > 1 && out[s].is_tensor && out[s].t)
            out[s].t->replicas = m;
    }
}
