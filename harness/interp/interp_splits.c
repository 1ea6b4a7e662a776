/* interp_splits.c — a collective call's explicit row splits (cg_coll.splits):
 * the lists its send_splits and recv_splits arguments hold on every slot,
 * read as whole row counts and checked here, at the call's position, so the
 * layers below only ever see splits that add up to the input's rows. Which
 * collectives take them is their syntax (coll_words.h), not this file's. */
#include "interp_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index into e->args of positional argument `pos` or keyword `kw`; -1 if absent. */
static int arg_index(const cg_expr *e, int pos, const char *kw)
{
    int positional = 0;
    for (int i = 0; i < e->nargs; i++) {
        if (e->kwnames && e->kwnames[i]) {
            if (strcmp(e->kwnames[i], kw) == 0)
                return i;
        } else if (positional++ == pos) {
            return i;
        }
    }
    return -1;
}

/* "[1, 2, 0]" into buf, for messages. */
static const char *list_str(const int64_t *v, int n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at + 24 < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? ", " : "[", (long long)v[i]);
    snprintf(buf + at, len - at, "%s", n ? "]" : "[]");
    return buf;
}

/* Slot s's value of argument `kw` as w whole row counts >= 0 in row[]. */
static int read_counts(cg_interp *I, const cg_val *v, cg_srcpos pos, int s, const char *kw, int w,
                       int64_t *row)
{
    if (!v->is_tensor || v->t->ndim != 1 || v->t->numel != w)
        return cg_error_at_rank(&I->st, pos, cg_slot_rank(I, s), I->world,
                                "expected %s as a list of %d row counts (one per rank%s), got %s",
                                kw, w, w == I->world ? "" : " of the group",
                                !v->is_tensor     ? "a number"
                                : v->t->ndim != 1 ? "a tensor that is not 1-d"
                                                  : "a list of another length");
    const cg_tensor *h = cg_tensor_host(I->g, v->t); /* a device list: read back, never differentiated */
    if (!h)
        return cg_error_wrap(&I->st, cg_graph_status(I->g), pos, cg_slot_rank(I, s), I->world);
    for (int r = 0; r < w; r++) {
        double x = cg_get(h, r);
        if (!isfinite(x) || x != floor(x) || x < 0 || x > 1e15)
            return cg_error_at_rank(&I->st, pos, cg_slot_rank(I, s), I->world,
                                    "expected whole row counts >= 0 in %s, got %g at index %d", kw,
                                    x, r);
        row[r] = (int64_t)x;
    }
    return 0;
}

int cg_read_splits(cg_interp *I, const cg_expr *e, cg_coll_kind kind, const cg_val *args,
                   cg_tensor **in, const int *slots, int nslots, int w, int64_t **splits)
{
    *splits = NULL;
    int send_at = cg_coll_keyword_index(kind, "send_splits");
    int i = send_at >= 0 ? arg_index(e, send_at, "send_splits") : -1;
    if (i < 0)
        return 0;
    int recv_at = cg_coll_keyword_index(kind, "recv_splits");
    int j = recv_at >= 0 ? arg_index(e, recv_at, "recv_splits") : -1;
    int64_t *send = calloc((size_t)nslots * (size_t)w * (j >= 0 ? 2 : 1), sizeof *send);
    if (!send)
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    int64_t *recv = j >= 0 ? send + (size_t)nslots * (size_t)w : NULL;
    char a[256], b[256];
    int rc = 0;
    for (int k = 0; rc == 0 && k < nslots; k++) {
        int s = slots[k];
        int64_t *row = send + (size_t)k * (size_t)w, total = 0;
        rc = read_counts(I, &args[(size_t)i * I->nslots + s], e->args[i]->pos, s, "send_splits", w,
                         row);
        if (rc == 0 && j >= 0)
            rc = read_counts(I, &args[(size_t)j * I->nslots + s], e->args[j]->pos, s, "recv_splits",
                             w, recv + (size_t)k * (size_t)w);
        for (int r = 0; rc == 0 && r < w; r++)
            total += row[r];
        int64_t rows = rc == 0 ? (in[s]->ndim ? in[s]->shape[0] : 1) : 0;
        if (rc == 0 && total != rows)
            rc = cg_error_at_rank(&I->st, e->args[i]->pos, cg_slot_rank(I, s), I->world,
                                  "expected send_splits to add up to the input's %lld rows, "
                                  "got %s (%lld)",
                                  (long long)rows, list_str(row, w, a, sizeof a), (long long)total);
    }
    /* What member k receives is what every member sends it: checkable only
     * where every member is simulated (the oracle, which runs first); row k
     * is the k-th member's, in the call's order. */
    for (int k = 0; rc == 0 && recv && nslots == w && k < w; k++) {
        int64_t want[CG_MAX_SIM_WORLD];
        for (int m = 0; m < w; m++)
            want[m] = send[(size_t)m * (size_t)w + (size_t)k];
        if (memcmp(want, recv + (size_t)k * (size_t)w, (size_t)w * sizeof *want) != 0)
            rc = cg_error_at_rank(&I->st, e->args[j]->pos, cg_slot_rank(I, slots[k]), I->world,
                                  "expected recv_splits %s (what the ranks' send_splits "
                                  "send rank %d), got %s",
                                  list_str(want, w, a, sizeof a), I->ranks[slots[k]],
                                  list_str(recv + (size_t)k * (size_t)w, w, b, sizeof b));
    }
    /* A reduce_scatter reduces block by block: every rank must cut its input
     * the same way (a scatter's are the root's alone; an all_to_all's are
     * each rank's own). */
    const cg_collective *d = cg_collective_of(kind);
    bool agree = d && d->shape == CG_SHAPE_BLOCK && !cg_coll_has_root(kind);
    for (int k = 1; rc == 0 && agree && k < nslots; k++)
        if (memcmp(send, send + (size_t)k * (size_t)w, (size_t)w * sizeof *send) != 0)
            rc = cg_error_at_rank(&I->st, e->args[i]->pos, cg_slot_rank(I, slots[k]), I->world,
                                  "expected the same send_splits on every rank of a %s, got %s "
                                  "here and %s on rank %d",
                                  cg_coll_name(kind),
                                  list_str(send + (size_t)k * (size_t)w, w, a, sizeof a),
                                  list_str(send, w, b, sizeof b), I->ranks[slots[0]]);
    if (rc != 0) {
        free(send);
        return -1;
    }
    *splits = send; /* recv, when given, was only checked: it says nothing send does not */
    return 0;
}
