/* transport_fault_data.c — what the fault wrapper's data faults do to the
 * buffers of a call (transport_fault_internal.h): a wrong sum, a dropped
 * rank, swapped slices, a flipped bit, a wrong root or element size, each
 * counted when it changed what a rank sees beyond the case's tolerance. */
#include "transport_fault_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cg_fault_active(const fault_inst *fi, cg_fault_kind k, bool on_every_rank)
{
    return fi->f.kind == k && (on_every_rank || fi->me == fi->f.rank) &&
           (!fi->f.filter[0] || strstr(fi->top->case_name, fi->f.filter));
}

size_t cg_fault_esize(cgt_dtype dt) { return dt == CGT_F64 ? 8 : dt == CGT_F32 ? 4 : 2; }

static double get(const void *b, size_t i, cgt_dtype dt)
{
    cg_tensor t = {.dtype = (cg_dtype)dt, .data = (void *)b};
    return cg_get(&t, (int64_t)i);
}

/* Whether old -> new is a change the checker can see: beyond the running
 * case's tolerance (a wrong_sum of 1 on 2e10 rounds away in f32 and hides
 * inside rtol in f64; a bit flipped in 0.0 makes a subnormal that atol
 * absorbs). Only such changes count as injected. */
static bool material(const fault_inst *fi, double old, double new)
{
    if (isnan(old) != isnan(new))
        return true;
    return fabs(new - old) > fi->top->rtol * fabs(old) + fi->top->atol;
}

void cg_fault_count_if(fault_inst *fi, bool changed)
{
    if (changed)
        fi->top->injected++;
}

/* Flip the top significand bit of element 0: a change of a quarter to a half
 * of the value, far outside any tolerance (a low bit could hide in it). */
void cg_fault_flip(fault_inst *fi, void *buf, size_t count, cgt_dtype dt)
{
    if (!count || !buf)
        return;
    double old = get(buf, 0, dt);
    unsigned char *p = buf;
    int bit = dt == CGT_F64 ? 51 : dt == CGT_F32 ? 22 : dt == CGT_BF16 ? 6 : 9;
    p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    cg_fault_count_if(fi, material(fi, old, get(buf, 0, dt)));
}

bool cg_fault_all_zero(const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++)
        if (p[i])
            return false;
    return true;
}

static void set(void *b, size_t i, cgt_dtype dt, double v)
{
    cg_tensor t = {.dtype = (cg_dtype)dt, .data = b};
    cg_set(&t, (int64_t)i, v);
}

/* Corrupt a reduction's result on the faulty rank. */
void cg_fault_corrupt_reduction(fault_inst *fi, void *recv, size_t count, cgt_dtype dt)
{
    if (!recv || !count)
        return;
    if (cg_fault_active(fi, CG_FAULT_WRONG_SUM, false)) {
        double old = get(recv, 0, dt);
        set(recv, 0, dt, old + 1.0);
        cg_fault_count_if(fi, material(fi, old, get(recv, 0, dt)));
    }
    if (cg_fault_active(fi, CG_FAULT_SCALE_WORLD, false)) {
        bool changed = false;
        for (size_t i = 0; i < count; i++) {
            double old = get(recv, i, dt);
            set(recv, i, dt, old * fi->world);
            changed |= material(fi, old, get(recv, i, dt));
        }
        cg_fault_count_if(fi, changed);
    }
    if (cg_fault_active(fi, CG_FAULT_BIT_FLIP, false))
        cg_fault_flip(fi, recv, count, dt);
}

/* A zeroed copy of send, standing in for the dropped rank's contribution. */
const void *cg_fault_maybe_dropped(fault_inst *fi, const void *send, size_t count, cgt_dtype dt)
{
    if (!cg_fault_active(fi, CG_FAULT_DROP_RANK, false) || !send)
        return send;
    size_t bytes = count * cg_fault_esize(dt);
    cg_fault_count_if(fi, !cg_fault_all_zero(send, bytes)); /* zeros dropped are zeros sent */
    if (bytes > fi->scratch_bytes) {
        void *p = realloc(fi->scratch, bytes);
        if (!p)
            return send;
        fi->scratch = p;
        fi->scratch_bytes = bytes;
    }
    memset(fi->scratch, 0, bytes);
    return fi->scratch;
}

/* wrong_dtype_size: the transport thinks elements are half as big, so it
 * moves half the bytes of every buffer (on every rank, to stay in step). */
size_t cg_fault_sized(fault_inst *fi, size_t count)
{
    if (!cg_fault_active(fi, CG_FAULT_DTYPE_SIZE, true))
        return count;
    cg_fault_count_if(fi, count > 0);
    return count / 2;
}

int cg_fault_root_of(fault_inst *fi, int root)
{
    if (!cg_fault_active(fi, CG_FAULT_WRONG_ROOT, true))
        return root;
    cg_fault_count_if(fi, fi->world > 1); /* at W=1 root + 1 is the root again */
    return (root + 1) % fi->world;
}

const size_t *cg_fault_counts_of(fault_inst *fi, const size_t *counts, size_t *buf)
{
    if (!cg_fault_active(fi, CG_FAULT_DTYPE_SIZE, true))
        return counts;
    bool changed = false;
    for (int r = 0; r < fi->world; r++) {
        buf[r] = counts[r] / 2;
        changed |= counts[r] > 0;
    }
    cg_fault_count_if(fi, changed);
    return buf;
}

/* swap_slices: the faulty rank's gathered blocks 0 and 1 trade places. */
void cg_fault_swap_blocks(fault_inst *fi, void *recv, const size_t *counts, cgt_dtype dt)
{
    if (!recv || fi->world < 2 || !cg_fault_active(fi, CG_FAULT_SWAP_SLICES, false))
        return;
    size_t n = counts[0] < counts[1] ? counts[0] : counts[1], es = cg_fault_esize(dt);
    unsigned char *a = recv, *b = a + counts[0] * es, tmp[8];
    cg_fault_count_if(fi, n > 0 && memcmp(a, b, n * es) != 0); /* equal blocks swapped are the same bytes */
    for (size_t i = 0; i < n * es; i += es) {
        memcpy(tmp, a + i, es);
        memcpy(a + i, b + i, es);
        memcpy(b + i, tmp, es);
    }
}

size_t cg_fault_total(const size_t *c, int w)
{
    size_t s = 0;
    for (int r = 0; r < w; r++)
        s += c[r];
    return s;
}

