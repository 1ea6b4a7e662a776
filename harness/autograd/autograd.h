/* autograd.h — the tape and the reverse pass.
 *
 * Every op that produces a tensor requiring grad appends one cg_node to its
 * graph's tape, in execution order. cg_backward() walks the whole tape in
 * reverse. A node whose output received no gradient in this pass is skipped,
 * unless it is a communication node (always_run): those run with a zero
 * gradient so that every rank issues the same backward collectives in the
 * same order (design.md section 3, last paragraph).
 *
 * Two gradient slots per tensor: pgrad carries the gradient of the current
 * pass between nodes; at the end of the pass it is added into grad for leaves
 * and retained tensors and then dropped. Several passes (repeated backward
 * calls) therefore accumulate exactly like PyTorch with retain_graph=True. */
#ifndef CG_AUTOGRAD_H
#define CG_AUTOGRAD_H

#include "tensor.h"

struct cg_node {
    const char *op;          /* "mul", "all_reduce", ... (static string) */
    cg_tensor *out;
    cg_tensor **in;          /* nin inputs, owned by the graph */
    int nin;
    double sarg[4];          /* op parameters: scalar exponent, ... */
    int64_t iarg[8];         /* op parameters: axis, slice bounds, ... */
    void *ctx;               /* op-private saved state, owned by the graph */
    bool always_run;         /* communication: run even with zero gradient */
    /* Read n->out->pgrad (never NULL when called), add into the inputs'
     * gradients with cg_accum_grad(). Returns 0, or -1 with the graph's status set. */
    int (*backward)(cg_graph *g, cg_node *n);
    cg_node *prev;           /* tape link, newest first */
};

/* Record a node producing out from in[0..nin-1]. Copies the in array. Sets
 * out->node and out->requires_grad. Returns the node (for op arguments), or
 * NULL on OOM. Ops call it only when cg_any_requires_grad(in, nin). */
cg_node *cg_record(cg_graph *g, const char *op, cg_tensor *out, cg_tensor *const *in,
                   int nin, int (*backward)(cg_graph *, cg_node *));
bool cg_any_requires_grad(cg_tensor *const *in, int nin);
/* out, with node op recorded when any of in[0..nin-1] requires grad, keeping
 * two integer arguments (n->iarg[0..1]) for the backward; NULL on OOM. */
cg_tensor *cg_record_if_needed(cg_graph *g, const char *op, cg_tensor *out, cg_tensor *const *in, int nin,
                               int (*backward)(cg_graph *, cg_node *), int64_t arg0, int64_t arg1);
/* t->pgrad = p where t had none in this pass: every op's backward that hands
 * a tensor its first gradient goes through here (or cg_accum_grad*). */
int cg_set_pgrad(cg_graph *g, cg_tensor *t, cg_tensor *p);

/* t->pgrad += d (elementwise, same numel). Allocates pgrad on first use.
 * No-op when t does not require grad. Returns 0 or -1 (OOM). */
int cg_accum_grad(cg_graph *g, cg_tensor *t, const cg_tensor *d);
/* The same for a d its caller made for this gradient alone and never touches
 * again (a collective's gx): the first gradient to reach t is d itself,
 * adopted rather than copied, so a pass holds one buffer per gradient, not
 * two. Later ones, or a d of another dtype or shape, are added as above. */
int cg_accum_grad_owned(cg_graph *g, cg_tensor *t, cg_tensor *d);
/* t->pgrad[i] += v, allocating pgrad on first use; no-op without requires_grad.
 * Host tensors only (the CPU ops' loops). */
int cg_accum_grad_at(cg_graph *g, cg_tensor *t, int64_t i, double v);
/* *slot = t's pgrad for this pass, made (zeros) on first use, for a kernel to
 * accumulate into; NULL when t needs no gradient. 0, or -1 out of memory. */
int cg_grad_slot(cg_graph *g, cg_tensor *t, cg_tensor **slot);

/* One backward pass: seed each root's pgrad with ones (roots may be NULL when
 * a rank has none), run the tape in reverse, fold pgrad into grad for leaves
 * and retained tensors. Returns 0, or -1 with the graph's error set (a root
 * that does not require grad fails like PyTorch: "element 0 of tensors does
 * not require grad and does not have a grad_fn"). */
int cg_backward(cg_graph *g, cg_tensor *const *roots, int nroots);
/* The same pass for sum_i weights[i] * roots[i] (weights NULL: all 1), the
 * weights applied to the seeds rather than recorded as ops (the oracle's
 * second pass: oracles/semantics.c). */
int cg_backward_weighted(cg_graph *g, cg_tensor *const *roots, const double *weights, int nroots);
/* One pass from root with the given gradient (torch's root.backward(grad)):
 * grad, of root's shape and dtype, is adopted as root's gradient, not copied
 * (the caller hands it over; it lives in g). 0, or -1 with the graph's error. */
int cg_backward_with(cg_graph *g, cg_tensor *root, cg_tensor *grad);

/* Drop every accumulated .grad (zero_grad()). */
void cg_zero_grad(cg_graph *g);

/* Number of nodes on the tape (tests and reports). */
int64_t cg_tape_len(const cg_graph *g);

#endif
