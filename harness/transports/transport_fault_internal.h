/* transport_fault_internal.h — the fault wrapper's instance, shared by the
 * wrapper (transport_fault.c: the table, install, groups) and what its data
 * faults do to a buffer (transport_fault_data.c). Not a public interface:
 * transport_fault.h is. */
#ifndef CG_TRANSPORT_FAULT_INTERNAL_H
#define CG_TRANSPORT_FAULT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "transport_fault.h"

/* One installed wrapper, owned by the handle it wraps (cg_fault_install
 * until cg_fault_uninstall). Wrapping a wrapped handle stacks them. A
 * process group's handle (split) gets a wrapper of its own around the inner
 * transport's split, owned by that handle (destroy); it reports to the
 * installed one, `top`, which holds the case, its tolerance and the count. */
typedef struct fault_inst {
    cg_transport_ops ops;  /* the wrapper's table, with the inner transport's version and caps */
    const cg_transport_ops *inner;
    cg_transport *in;
    cg_fault f;
    int rank, world;        /* in this handle's world: a group's ranks count from 0 */
    int me;                 /* this process's rank in the world: the faulty one is a world rank */
    struct fault_inst *top; /* the installed wrapper (itself, unless a group's) */
    char case_name[96];   /* the running case (the CASE filter) */
    double rtol, atol;    /* its tolerance: what a visible change is */
    void *scratch;
    size_t scratch_bytes;
    long injected;        /* calls this rank's fault changed, since cg_fault_take_count */
} fault_inst;

#define INST(t) ((fault_inst *)(void *)(t))

/* What a data fault does to a call (transport_fault_data.c, each described there). */
bool cg_fault_active(const fault_inst *fi, cg_fault_kind k, bool on_every_rank);
size_t cg_fault_esize(cgt_dtype dt);
void cg_fault_count_if(fault_inst *fi, bool changed);
void cg_fault_flip(fault_inst *fi, void *buf, size_t count, cgt_dtype dt);
bool cg_fault_all_zero(const void *buf, size_t bytes);
void cg_fault_corrupt_reduction(fault_inst *fi, void *recv, size_t count, cgt_dtype dt);
const void *cg_fault_maybe_dropped(fault_inst *fi, const void *send, size_t count, cgt_dtype dt);
size_t cg_fault_sized(fault_inst *fi, size_t count);
int cg_fault_root_of(fault_inst *fi, int root);
const size_t *cg_fault_counts_of(fault_inst *fi, const size_t *counts, size_t *buf);
void cg_fault_swap_blocks(fault_inst *fi, void *recv, const size_t *counts, cgt_dtype dt);
size_t cg_fault_total(const size_t *c, int w);

#endif
