/* rules_local.h — what a built-in rule set does on its own rank between
 * transport calls (copies, scratch buffers, elementwise factors), on host or
 * device tensors alike.
 *
 * A rule call's tensors all live in one place: host memory, or the GPU when
 * the worker runs with --device cuda. Each function here looks at call->gx
 * and runs its host loop (the CPU reference) or its kernel twin
 * (cuda/rules_local.cu, cuda/ops_scalar.cu); the per-element formulas are
 * shared through rules_local_math.h. Every function returns 0, or -1 with
 * call->st set (a failing CUDA call is named). Not part of the plugin ABI:
 * rule-set plugins see host tensors only (rules.h). */
#ifndef CG_RULES_LOCAL_H
#define CG_RULES_LOCAL_H

#include <stdbool.h>

#include "rules.h"

/* A scratch graph whose buffers live where call's tensors do; the caller
 * frees it with cg_graph_free. NULL with call->st when out of memory. */
cg_graph *cg_local_scratch(cg_rule_call *call);
/* Zeroed bytes owned by scratch; NULL with call->st. */
void *cg_local_buffer(cg_rule_call *call, cg_graph *scratch, size_t bytes);
/* memcpy where call's tensors live. */
int cg_local_copy(cg_rule_call *call, void *dst, const void *src, size_t bytes);
/* t *= v, t /= v (t is one of call's tensors or lives beside them). */
int cg_local_mul(cg_rule_call *call, cg_tensor *t, double v);
int cg_local_div(cg_rule_call *call, cg_tensor *t, double v);

/* all_reduce(prod)'s factor Π_{k≠i} x_k, in two halves around the two
 * all_reduces that count the world's zeros and multiply its nonzero values:
 * zeros and nonzero are f64 tensors of x's numel. */
int cg_local_prod_split(cg_rule_call *call, const cg_tensor *x, cg_tensor *zeros,
                        cg_tensor *nonzero);
int cg_local_prod_scale(cg_rule_call *call, const cg_tensor *x, const cg_tensor *zeros,
                        const cg_tensor *nonzero, cg_tensor *gx);
/* max/min's share, around the all_reduce that counts ties: mask = (x == m)
 * as f64, then gx *= (x == m) / ties. */
int cg_local_equal_mask(cg_rule_call *call, const cg_tensor *x, const cg_tensor *m,
                        cg_tensor *mask);
int cg_local_tie_scale(cg_rule_call *call, const cg_tensor *x, const cg_tensor *m,
                       const cg_tensor *ties, cg_tensor *gx);
/* torch_xla's local AllReduce.backward: gx = prod ? g*y/x : g where x == y. */
int cg_local_xla_grad(cg_rule_call *call, bool prod, const cg_tensor *gy, const cg_tensor *x,
                      const cg_tensor *y, cg_tensor *gx);

#endif
