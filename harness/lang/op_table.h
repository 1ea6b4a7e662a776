/* op_table.h — the case language's tensor functions: one row per op, read
 * by every layer that must know an op, each through its own expansion of
 * CG_OP_TABLE:
 *   lang (ir.c):            name, arity and keywords, to parse a call;
 *   interp (interp_call.c): the class and the entry, to evaluate one;
 *   run (export_ir.c):      the rows as JSON, which the Python runner checks
 *                           its own entries against (python/collgrad_torch/ops.py);
 *   explore's generator:    shape rule, domain and differentiability, to draw
 *                           only programs that are valid and smooth where it
 *                           differentiates them.
 * Adding an op is one row here, its forward/backward pair in
 * harness/autograd (with its CUDA kernel beside the CPU reference), its
 * torch twin in ops.py, and its test.
 *
 * A row: X(ID, "name", min args, max args, keyword (NULL: none), the
 * keyword's positional index (-1: keyword-only, or none), class, shape rule, domain,
 * differentiability, entry). Arity counts positional and keyword arguments
 * together. The entry is only ever expanded by the interpreter: an autograd
 * op (cg_exp: its backward is recorded with it) or, for the classes the
 * interpreter must read arguments for itself, its own evaluator (and
 * cross_entropy_of, whose labels autograd takes const). Nothing in this
 * layer links to either. */
#ifndef CG_OP_TABLE_H
#define CG_OP_TABLE_H

/* How the interpreter calls the entry. */
typedef enum {
    CG_OPC_CTOR,    /* constant tensor from sizes (the interpreter's constructor) */
    CG_OPC_LEAF,    /* param(t): a leaf that requires grad */
    CG_OPC_UNARY,   /* entry(g, t) */
    CG_OPC_BINARY,  /* entry(g, a, b) */
    CG_OPC_AXIS,    /* entry(g, t, axis): axis= defaults to all elements (-1) */
    CG_OPC_AXIS_LAST, /* entry(g, t, axis): axis= defaults to the last axis, as torch's dim=-1 */
    CG_OPC_CALL,    /* the interpreter's own evaluator: entry(call, slot) */
} cg_op_class;

/* The output's shape from the inputs' (what a generator must respect). */
typedef enum {
    CG_OSH_SIZES,     /* from the size arguments */
    CG_OSH_SAME,      /* the input's */
    CG_OSH_BROADCAST, /* elementwise over two inputs, one of them may be a single element */
    CG_OSH_MATMUL,    /* [m, k] @ [k, n] -> [m, n] (and torch.matmul's 1-D cases) */
    CG_OSH_SCALAR,    /* a 0-d tensor */
    CG_OSH_REDUCE,    /* the axis removed, or 0-d without axis= */
    CG_OSH_TRANSPOSE, /* the last two axes swapped */
    CG_OSH_CAT,       /* the inputs joined along axis= */
    CG_OSH_RESHAPE,   /* the sizes given, the same element count */
    CG_OSH_SLICE,     /* one axis cut to [lo, hi) */
    CG_OSH_PIECES,    /* the first axis cut into equal pieces, stacked: [n, rows / n, ...] */
} cg_op_shape;

/* Where the inputs must lie for a finite value (and a finite derivative). */
typedef enum {
    CG_DOM_ANY,
    CG_DOM_POSITIVE, /* log, sqrt, pow's base */
    CG_DOM_LABELS,   /* cross_entropy's second input: whole class numbers in 0..C-1 */
} cg_op_domain;

/* Where the op is differentiable (what finite differences may check). */
typedef enum {
    CG_DIFF_SMOOTH, /* everywhere in its domain */
    CG_DIFF_KINK0,  /* not at 0 (relu, abs, norm of zeros): the oracle notes it and skips */
    CG_DIFF_NONE,   /* no gradient flows (detach, constants) */
} cg_op_diff;

#define CG_OP_TABLE(X)                                                                               \
    X(ONES, "ones", 0, 4, NULL, -1, CG_OPC_CTOR, CG_OSH_SIZES, CG_DOM_ANY, CG_DIFF_NONE, NULL)  \
    X(ZEROS, "zeros", 0, 4, NULL, -1, CG_OPC_CTOR, CG_OSH_SIZES, CG_DOM_ANY, CG_DIFF_NONE, NULL) \
    X(RAND, "rand", 0, 4, NULL, -1, CG_OPC_CTOR, CG_OSH_SIZES, CG_DOM_ANY, CG_DIFF_NONE, NULL)  \
    X(RANDN, "randn", 0, 4, NULL, -1, CG_OPC_CTOR, CG_OSH_SIZES, CG_DOM_ANY, CG_DIFF_NONE, NULL) \
    X(FULL, "full", 1, 5, NULL, -1, CG_OPC_CTOR, CG_OSH_SIZES, CG_DOM_ANY, CG_DIFF_NONE, NULL)  \
    X(ARANGE, "arange", 1, 1, NULL, -1, CG_OPC_CTOR, CG_OSH_SIZES, CG_DOM_ANY, CG_DIFF_NONE,     \
      NULL)                                                                                          \
    X(EYE, "eye", 1, 3, NULL, -1, CG_OPC_CTOR, CG_OSH_SIZES, CG_DOM_ANY, CG_DIFF_NONE, NULL)    \
    X(PARAM, "param", 1, 1, NULL, -1, CG_OPC_LEAF, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_SMOOTH,      \
      NULL)                                                                                          \
    X(EXP, "exp", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_SMOOTH, cg_exp) \
    X(LOG, "log", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_POSITIVE, CG_DIFF_SMOOTH,    \
      cg_log)                                                                                        \
    X(TANH, "tanh", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_SMOOTH,       \
      cg_tanh)                                                                                       \
    X(RELU, "relu", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_KINK0,        \
      cg_relu)                                                                                       \
    X(ABS, "abs", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_KINK0, cg_abs)  \
    X(GELU, "gelu", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_SMOOTH, cg_gelu)    \
    X(NEG, "neg", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_SMOOTH, cg_neg)  \
    X(POW, "pow", 2, 2, NULL, -1, CG_OPC_BINARY, CG_OSH_BROADCAST, CG_DOM_POSITIVE,              \
      CG_DIFF_SMOOTH, cg_pow)                                                                        \
    X(SUM, "sum", 1, 2, "axis", 1, CG_OPC_AXIS, CG_OSH_REDUCE, CG_DOM_ANY, CG_DIFF_SMOOTH, cg_sum)     \
    X(MEAN, "mean", 1, 2, "axis", 1, CG_OPC_AXIS, CG_OSH_REDUCE, CG_DOM_ANY, CG_DIFF_SMOOTH, cg_mean)  \
    X(LOGSUMEXP, "logsumexp", 1, 2, "axis", 1, CG_OPC_AXIS, CG_OSH_REDUCE, CG_DOM_ANY, CG_DIFF_SMOOTH, \
      cg_logsumexp)                                                                                  \
    X(LOG_SOFTMAX, "log_softmax", 1, 2, "axis", 1, CG_OPC_AXIS_LAST, CG_OSH_SAME, CG_DOM_ANY,          \
      CG_DIFF_SMOOTH, cg_log_softmax)                                                                \
    X(SOFTMAX, "softmax", 1, 2, "axis", 1, CG_OPC_AXIS_LAST, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_SMOOTH,  \
      cg_softmax)                                                                                    \
    X(SQRT, "sqrt", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_POSITIVE, CG_DIFF_SMOOTH,  \
      cg_sqrt)                                                                                       \
    X(NORM, "norm", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SCALAR, CG_DOM_ANY, CG_DIFF_KINK0,      \
      cg_norm)                                                                                       \
    X(CROSS_ENTROPY, "cross_entropy", 2, 2, NULL, -1, CG_OPC_BINARY, CG_OSH_SCALAR,              \
      CG_DOM_LABELS, CG_DIFF_SMOOTH, cross_entropy_of)                                               \
    X(MATMUL, "matmul", 2, 2, NULL, -1, CG_OPC_BINARY, CG_OSH_MATMUL, CG_DOM_ANY, CG_DIFF_SMOOTH, \
      cg_matmul)                                                                                     \
    X(TRANSPOSE, "transpose", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_TRANSPOSE, CG_DOM_ANY,        \
      CG_DIFF_SMOOTH, cg_transpose)                                                                  \
    X(RESHAPE, "reshape", 2, 5, NULL, -1, CG_OPC_CALL, CG_OSH_RESHAPE, CG_DOM_ANY,               \
      CG_DIFF_SMOOTH, eval_reshape)                                                                  \
    X(CAT, "cat", 1, 64, "axis", -1, CG_OPC_CALL, CG_OSH_CAT, CG_DOM_ANY, CG_DIFF_SMOOTH, eval_cat)    \
    X(SLICE, "slice", 4, 4, NULL, -1, CG_OPC_CALL, CG_OSH_SLICE, CG_DOM_ANY, CG_DIFF_SMOOTH,     \
      eval_slice)                                                                                    \
    X(CHUNK, "chunk", 2, 2, NULL, -1, CG_OPC_CALL, CG_OSH_PIECES, CG_DOM_ANY, CG_DIFF_SMOOTH,    \
      eval_pieces)                                                                                   \
    X(SPLIT, "split", 2, 2, NULL, -1, CG_OPC_CALL, CG_OSH_PIECES, CG_DOM_ANY, CG_DIFF_SMOOTH,    \
      eval_pieces)                                                                                   \
    X(DETACH, "detach", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_NONE,     \
      cg_detach)                                                                                     \
    X(CLONE, "clone", 1, 1, NULL, -1, CG_OPC_UNARY, CG_OSH_SAME, CG_DOM_ANY, CG_DIFF_SMOOTH,     \
      cg_clone)

typedef enum {
#define CG_OP_TABLE_ID(id, name, lo, hi, kw, kwpos, cls, shape, dom, diff, entry) CG_FN_##id,
    CG_OP_TABLE(CG_OP_TABLE_ID)
#undef CG_OP_TABLE_ID
        CG_FN_COUNT
} cg_fn_id;

/* A row as data (ir.c), for everything that is not the interpreter. */
typedef struct cg_op_info {
    const char *name;
    int min_args, max_args;
    const char *keyword; /* NULL: none */
    int kw_first;        /* positional index of keyword; -1: keyword-only */
    cg_op_class cls;
    cg_op_shape shape;
    cg_op_domain domain;
    cg_op_diff diff;
} cg_op_info;

const cg_op_info *cg_op_info_of(cg_fn_id id); /* NULL for no such id */
int cg_op_from_name(const char *name);        /* its id, or -1 */
const char *cg_op_class_name(cg_op_class c);  /* "ctor", "unary", ... (export-ir) */
const char *cg_op_shape_name(cg_op_shape s);  /* "same", "reduce", ... */
const char *cg_op_domain_name(cg_op_domain d); /* "any", "positive", "labels" */
const char *cg_op_diff_name(cg_op_diff d);    /* "smooth", "kink0", "none" */

#endif
