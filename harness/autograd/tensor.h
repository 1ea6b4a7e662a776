/* tensor.h — dense host tensors (up to 4-D) owned by a graph arena.
 *
 * Ownership: every tensor, every autograd node and every scratch buffer made
 * while running a program belongs to one cg_graph and is released, all at
 * once, by cg_graph_free(). Nothing here is reference counted: a tensor stays
 * valid exactly as long as its graph does.
 *
 * Storage is in the tensor's dtype (so an f32 run really rounds to f32), but
 * every CPU kernel reads and writes elements through cg_get()/cg_set() as
 * double. Computing an f32 +,-,*,/ in double and rounding once gives the same
 * correctly rounded f32 result, so this costs accuracy nowhere and keeps one
 * kernel per op instead of one per dtype.
 *
 * Failure: constructors and ops return NULL and leave a message in the graph's
 * status (cg_graph_status); they never abort. */
#ifndef CG_TENSOR_H
#define CG_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h" /* lang: cg_dtype and the half formats */
#include "cancel.h"  /* a run's deadline */
#include "status.h"  /* lang: the error type */

#define CG_MAX_DIMS 4

typedef struct cg_graph cg_graph;
typedef struct cg_node cg_node;

typedef struct cg_tensor {
    int ndim;
    int64_t shape[CG_MAX_DIMS];
    int64_t numel;
    cg_dtype dtype;
    void *data;            /* numel elements of dtype; owned by the graph */
    bool requires_grad;    /* a leaf param, or computed from one (or a comm output) */
    bool is_leaf;          /* made by param(): gradients accumulate here */
    bool retain;           /* keep .grad even if not a leaf (named by the program) */
    cg_node *node;         /* the op that produced it; NULL for leaves and constants */
    struct cg_tensor *grad;  /* accumulated over backward passes; NULL until one reaches it */
    struct cg_tensor *pgrad; /* gradient flowing in the current pass; NULL = zero */
    int64_t id;            /* creation order in the graph, for stable printing */
    bool on_device;        /* data is CUDA device memory; last, so plugins built
                            * against the earlier layout still read the rest */
    int replicas;          /* the oracle's simulated ranks this one tensor stands for
                            * (a replicated value, interp.h cg_share); 0 or 1: one */
} cg_tensor;

/* ---- the arena ---------------------------------------------------------- */

cg_graph *cg_graph_new(void);            /* NULL only when out of memory */
void cg_graph_free(cg_graph *g);         /* frees everything made in g; NULL is fine */
void *cg_alloc(cg_graph *g, size_t n);   /* zeroed scratch memory owned by g, NULL + error on OOM */
char *cg_strdup(cg_graph *g, const char *s);
/* An element budget, checked before any tensor's memory is allocated: at
 * most per_tensor elements in one tensor, and per_rank * ranks in all the
 * tensors ever made in g (ranks: how many ranks the graph simulates). A
 * tensor over either fails with a message naming the limit's option.
 * 0 = no limit (the default of a new graph). */
void cg_graph_set_limits(cg_graph *g, int64_t per_tensor, int64_t per_rank, int ranks);

/* The graph's status (status.h): an op that fails records its message and
 * class there with cg_error / cg_error_infra (out of memory, a signal, a
 * deadline: not the program's fault) and returns NULL or -1; whoever reports
 * reads ->msg and ->code, and a caller that recovers (the FD check, a test)
 * resets it to CG_STATUS_OK. A message rewritten with more context (the old
 * one an argument) keeps the class of its cause, so an op that wraps "out of
 * memory" is still out of memory. */
cg_status *cg_graph_status(cg_graph *g);
/* 0, or -1 with an infra error naming why when the run was asked to stop:
 * a signal, or the graph's deadline passed (cancel.h). Long loops call it
 * between steps. A new graph has no deadline; its owner sets the run's. */
int cg_check_cancel(cg_graph *g);
void cg_graph_set_deadline(cg_graph *g, cg_deadline d);

/* Non-differentiable points met by the forward pass (MAX at ties, relu(0),
 * abs(0)). The oracle's finite-difference check is skipped with this reason. */
void cg_note_nondiff(cg_graph *g, const char *reason);
const char *cg_graph_nondiff(const cg_graph *g); /* NULL when none met */

/* Bookkeeping the graph keeps for autograd.c (the struct is private to
 * tensor.c). The tensor array is valid until the next tensor is made. */
cg_tensor *const *cg_graph_tensors(const cg_graph *g, int64_t *n); /* creation order */
cg_node *cg_graph_tape(const cg_graph *g);        /* newest node; NULL when empty */
void cg_graph_push_tape(cg_graph *g, cg_node *n); /* n->prev = newest; n becomes newest */
/* Mark n a communication node that runs in every pass (counted: autograd.c
 * walks past the last node with a gradient only while one remains). */
void cg_node_always_run(cg_graph *g, cg_node *n);
int64_t cg_graph_always_run_count(const cg_graph *g);
/* The current backward pass's bookkeeping (autograd.c): t was just given a
 * pgrad (-1 and the graph's status on OOM); the list of such tensors; how
 * many of them a node made whose node has not run; one such node ran; the
 * pass is over. */
int cg_graph_touch(cg_graph *g, cg_tensor *t);
cg_tensor *const *cg_graph_touched(const cg_graph *g, int64_t *n);
int64_t cg_graph_pending(const cg_graph *g);
void cg_graph_node_ran(cg_graph *g);
void cg_graph_untouch_all(cg_graph *g);
/* How many tape nodes the backward passes have visited so far (tests bound it). */
void cg_graph_count_walked(cg_graph *g, int64_t n);
int64_t cg_graph_nodes_walked(const cg_graph *g);

/* ---- where the data lives ------------------------------------------------ */

/* A new graph keeps its tensors in host memory. After cg_graph_use_cuda(g),
 * every tensor made in g lives on the current CUDA device (data is a device
 * pointer, on_device is true): only the cg_cuda_* kernels, the transport and
 * the copies below may touch it, never cg_get/cg_set. Call it before the
 * first tensor is made, after the transport has picked the GPU. Returns 0, or
 * -1 with the graph's error (a build without CUDA, out of memory). */
int cg_graph_use_cuda(cg_graph *g);
bool cg_graph_on_cuda(const cg_graph *g);
/* Zeroed bytes where g's tensors live (a transport's scratch); NULL + error. */
void *cg_alloc_data(cg_graph *g, size_t n);
/* cg_error(st, <the CUDA layer's last message>): -1. */
int cg_error_cuda(cg_status *st);

/* ---- construction -------------------------------------------------------- */

/* A new zero-filled tensor. ndim 0 is a scalar (numel 1). Any dim may be 0. */
cg_tensor *cg_tensor_new(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape);
cg_tensor *cg_tensor_like(cg_graph *g, const cg_tensor *t); /* same dtype/shape, zeros */
/* A tensor its caller overwrites whole before anyone reads it (a transport's
 * receive buffer). Its contents until then are unspecified: zeros, or, in a
 * large block reused from an earlier step, NaNs at every page start and at
 * the end (big_blocks.h) instead of a clearing pass as long as the call. */
cg_tensor *cg_tensor_new_unset(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape);
cg_tensor *cg_scalar(cg_graph *g, cg_dtype dt, double v);
cg_tensor *cg_full(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape, double v);
/* Copy of t's values in dtype dt (rounded), no autograd history, where g's
 * tensors live. */
cg_tensor *cg_tensor_cast(cg_graph *g, const cg_tensor *t, cg_dtype dt);
/* A zero-filled tensor in host memory whatever g's device: values are built
 * there with cg_set, then moved with cg_tensor_place. */
cg_tensor *cg_tensor_new_host(cg_graph *g, cg_dtype dt, int ndim, const int64_t *shape);

/* ---- whole tensors on either side (tensor_math.c) ------------------------ */
/* Each returns -1 (or NULL) with the graph's error when a CUDA call fails. */

/* host (a host tensor) where g's tensors live: an uploaded copy on a CUDA
 * graph, host itself otherwise. Loading inputs is the only upload a run makes. */
cg_tensor *cg_tensor_place(cg_graph *g, cg_tensor *host);
/* t's values in host memory: a downloaded copy of a device tensor (owned by
 * g), t itself otherwise. Reading results is the only download a run makes. */
const cg_tensor *cg_tensor_host(cg_graph *g, const cg_tensor *t);
/* 0 when every in[k] lives where out does; else -1 with "<op>: ..." (an op
 * must never hand a kernel a host pointer, or a host loop a device one). */
int cg_check_placed(cg_graph *g, const char *op, const cg_tensor *out, cg_tensor *const *in,
                    int nin);
/* dst[dst_at + i] = src[src_at + i] for i < n; same dtype, same side. */
int cg_tensor_copy_elems(cg_graph *g, cg_tensor *dst, int64_t dst_at, const cg_tensor *src,
                         int64_t src_at, int64_t n);
/* dst += src elementwise (same numel and dtype). */
int cg_tensor_accumulate(cg_graph *g, cg_tensor *dst, const cg_tensor *src);
/* t = v for every element (host: one pass; device: t * 0 + v, so t's
 * elements must be finite). 0, or -1 with the graph's error. */
int cg_tensor_fill(cg_graph *g, cg_tensor *t, double v);
/* t += v, t *= v, t /= v for every element. */
int cg_tensor_add_scalar(cg_graph *g, cg_tensor *t, double v);
int cg_tensor_mul_scalar(cg_graph *g, cg_tensor *t, double v);
int cg_tensor_div_scalar(cg_graph *g, cg_tensor *t, double v);
/* t *= v (t /= v when divide) without a graph: -1 only when the kernel
 * fails, cg_cuda_last_error() saying why (the rule sets' scaling). */
int cg_tensor_scale_by(cg_tensor *t, double v, bool divide);

static inline double cg_get(const cg_tensor *t, int64_t i);
static inline void cg_set(cg_tensor *t, int64_t i, double v);

bool cg_same_shape(const cg_tensor *a, const cg_tensor *b);
/* "[2,3]" into buf; returns buf. cg_dims_str for a shape held apart from a
 * tensor (a report's, an oracle's). */
char *cg_shape_str(const cg_tensor *t, char *buf, size_t len);
char *cg_dims_str(int ndim, const int64_t *shape, char *buf, size_t len);
/* Row-major strides of shape into st[]. */
void cg_strides(int ndim, const int64_t *shape, int64_t *st);


static inline double cg_get(const cg_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case CG_F32: return ((const float *)t->data)[i];
    case CG_F64: return ((const double *)t->data)[i];
    case CG_BF16: return cg_bf16_to_f32(((const uint16_t *)t->data)[i]);
    case CG_F16: return cg_f16_to_f32(((const uint16_t *)t->data)[i]);
    }
    return 0.0;
}

static inline void cg_set(cg_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case CG_F32: ((float *)t->data)[i] = (float)v; break;
    case CG_F64: ((double *)t->data)[i] = v; break;
    case CG_BF16: ((uint16_t *)t->data)[i] = cg_f32_to_bf16((float)v); break;
    case CG_F16: ((uint16_t *)t->data)[i] = cg_f32_to_f16((float)v); break;
    }
}

#endif
