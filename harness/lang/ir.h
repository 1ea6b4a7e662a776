/* ir.h — a parsed case: header, program (statements over expressions) and
 * expectations. Produced by cg_parse_case() (parser.c), consumed by the
 * interpreter (interp.c) and by the oracle and the diff.
 *
 * Ownership: one cg_case owns everything reachable from it (all strings,
 * expressions, statements) and cg_case_free() releases it. */
#ifndef CG_IR_H
#define CG_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dtype.h"
#include "status.h"

/* Worlds a case declares and a distributed run launches: 1..CG_MAX_WORLD.
 * The oracle alone simulates up to CG_MAX_SIM_WORLD ranks (bench --oracle);
 * its plan, which only a distributed run reads, is not kept beyond
 * CG_MAX_WORLD. */
#define CG_MAX_WORLD 64
#define CG_MAX_SIM_WORLD 1024

/* ---- expressions ---------------------------------------------------------
 * Expressions are untyped in the tree; the interpreter decides, per rank,
 * whether a node yields a scalar (a double: rank, world, 2 * rank + 1, ...)
 * or a tensor. A scalar used where a tensor is needed becomes a 0-d tensor. */
typedef enum {
    CG_E_NUM,     /* num */
    CG_E_RANK,    /* rank */
    CG_E_WORLD,   /* world */
    CG_E_NAME,    /* name: a tensor bound by an earlier assignment */
    CG_E_LIST,    /* [a, b, ...]: a literal tensor; nested lists make 2-D.. */
    CG_E_UNARY,   /* op args[0]: '-' or '!' */
    CG_E_BINARY,  /* args[0] op args[1] */
    CG_E_TERNARY, /* args[0] ? args[1] : args[2] */
    CG_E_CALL,    /* name(args..., kw=args...) */
    CG_E_INDEX,   /* args[0][args[1]] or args[0][args[1]:args[2]] (either may be NULL) */
    CG_E_WORD,    /* a bare keyword argument value: sum, prod, max, ... (name) */
} cg_expr_kind;

typedef enum {
    CG_OP_ADD = 1, CG_OP_SUB, CG_OP_MUL, CG_OP_DIV, CG_OP_POW, CG_OP_MATMUL, /* + - * / ** @ */
    CG_OP_EQ, CG_OP_NE, CG_OP_LT, CG_OP_LE, CG_OP_GT, CG_OP_GE,           /* == != < <= > >= */
    CG_OP_AND, CG_OP_OR, CG_OP_MOD,                                      /* && || % */
    CG_OP_NEG, CG_OP_NOT,                                                /* unary - ! */
} cg_opcode;

typedef struct cg_expr {
    cg_expr_kind kind;
    cg_srcpos pos;        /* where the expression starts */
    double num;           /* CG_E_NUM */
    char *name;           /* CG_E_NAME, CG_E_CALL (function), CG_E_WORD */
    cg_opcode op;         /* CG_E_UNARY, CG_E_BINARY */
    bool is_slice;        /* CG_E_INDEX: a[b:c] rather than a[b] */
    int nargs;
    struct cg_expr **args;  /* operands, call arguments (positional then keyword), list items */
    char **kwnames;       /* CG_E_CALL: kwnames[i] is NULL for positional args, else "axis", ... */
} cg_expr;

/* ---- statements ---------------------------------------------------------- */
typedef enum {
    CG_S_ASSIGN,   /* names[0..nnames-1] = expr; several names split axis 0 evenly */
    CG_S_CALL,     /* backward(t), zero_grad(), send(t, dst): expr is the CG_E_CALL */
    CG_S_ON,       /* on ranks { body }: ranks is a list of scalar expressions */
} cg_stmt_kind;

typedef struct cg_stmt {
    cg_stmt_kind kind;
    cg_srcpos pos;
    int nnames;
    char **names;             /* CG_S_ASSIGN */
    cg_expr *expr;            /* CG_S_ASSIGN, CG_S_CALL */
    int nranks;
    cg_expr **ranks;          /* CG_S_ON */
    int nbody;
    struct cg_stmt **body;    /* CG_S_ON */
    int index;                /* position in a pre-order walk of the program, 0-based */
} cg_stmt;

/* ---- expectations -------------------------------------------------------- */
typedef enum {
    CG_X_GRAD,  /* expect grad(name) ... */
    CG_X_VALUE, /* expect value(name) ... */
    CG_X_ERROR, /* expect error "substring", expect raises rules=NAME */
} cg_expect_kind;

typedef enum {
    CG_SEM_PER_RANK = 0, /* default */
    CG_SEM_REPLICATED,
    CG_SEM_OWN_LOSS,     /* dL_r/dx_r */
} cg_semantics;

const char *cg_semantics_name(cg_semantics s); /* "per_rank", "replicated", "own_loss" */

/* Whether a case's rules=WANT names the rule set called NAME: the same name,
 * or WANT a family ("torch-nn") and NAME one of its versions
 * ("torch-nn@2.4"). An expectation of the family holds for every version. */
bool cg_rules_name_covers(const char *want, const char *name);

typedef enum { CG_PHASE_ANY = 0, CG_PHASE_FORWARD, CG_PHASE_BACKWARD } cg_phase;

typedef struct cg_expect {
    cg_expect_kind kind;
    cg_srcpos pos;
    char *tensor;             /* GRAD, VALUE: the name */
    cg_semantics semantics;   /* GRAD */
    char *rules;              /* "rules=NAME": checked only when that rule set runs; NULL = the truth */
    cg_srcpos rules_pos;      /* where NAME is written */
    int nranks;               /* "on 0, 1": restrict to those ranks; 0 = all ranks */
    int *ranks;
    /* exactly one of the three value forms: */
    bool undefined;           /* "undefined": replicated is undefined (roots differ) */
    int nlists;               /* per-rank lists "[1, 2] [3, 4]": nlists == world it applies to */
    int *list_len;            /* number of values in each list */
    double **lists;           /* flattened values; one value broadcasts to every element */
    cg_expr *expr;            /* "= EXPR": evaluated per rank (rank, world, names' values) */
    char *message;            /* ERROR: expected substring of the error message ("" for any) */
    bool raises;              /* ERROR written `expect raises rules=NAME ["..."]`: the error must
                               * be the framework's refusal, CG_RAISES_MARK (rules.h, refuses) */
    cg_phase phase;           /* `raises rules=NAME at forward|backward`: some rank's refusal
                               * comes in that phase; CG_PHASE_ANY when not written */
} cg_expect;

/* The phase of a rank's error text: backward when it names a backward (the
 * worker's "backward of all_gather(...): ...", PyTorch ranks' "... at
 * backward: ..."), else forward. */
cg_phase cg_error_phase(const char *error);
const char *cg_phase_name(cg_phase p); /* "forward", "backward", "any" */

/* What every refusal a rule set declares (rules.h, refuses) says first. */
#define CG_RAISES_MARK "the framework raises"

/* ---- the case ------------------------------------------------------------ */
/* What a case may ask for, checked before anything is read or allocated
 * (case files are untrusted input). Zero fields take the defaults below,
 * which the help text and docs/case-language.md quote: far above any case written by
 * hand or generated with value lists, far below what would exhaust a rank. */
typedef struct cg_limits {
    size_t case_bytes;        /* --max-case-bytes: the largest case file read */
    int64_t value_elements;   /* --max-elements: the most elements in one tensor */
    int64_t case_elements;    /* --max-case-elements: all of a rank's tensors together */
} cg_limits;

#define CG_DEFAULT_MAX_CASE_BYTES ((size_t)4 << 20)       /* 4M */
#define CG_DEFAULT_MAX_ELEMENTS ((int64_t)1 << 24)        /* 16M: 128 MiB in f64 */
#define CG_DEFAULT_MAX_CASE_ELEMENTS ((int64_t)1 << 27)   /* 128M: 1 GiB in f64, per rank */

/* lim with every zero field replaced by its default (lim may be NULL). */
cg_limits cg_limits_or_default(const cg_limits *lim);

/* "jax KEY=VALUE ...": how collgrad_jax.runner writes the program in JAX
 * where JAX has two spellings of one program; the oracle and every other
 * backend ignore it (docs/case-language.md). */
typedef struct cg_jax_spelling {
    bool all_gather_invarying; /* all_gather=invarying: jax.lax.all_gather(..., to='invarying') */
    bool loss_replicated;      /* loss=replicated: the roots returned under out_specs=P() */
    bool backward_in_body;     /* backward=in_body: each backward() a jax.vjp inside the body */
} cg_jax_spelling;

typedef struct cg_case {
    char *name;               /* "case NAME" */
    char *file;               /* path it was read from */
    char *source;             /* "source TEXT" (rest of the line), may be NULL */
    int nworlds;
    int worlds[CG_MAX_WORLD]; /* "world 2" or "worlds 1..8" or "worlds 2, 4"; sorted, unique */
    cg_dtype dtype;           /* "dtype f64"; default f64 */
    double rtol, atol;        /* "tolerance rtol=.. atol=.."; 0 = the dtype's default */
    unsigned long long seed;  /* "seed N"; default: a hash of the case name */
    bool has_seed;
    cg_jax_spelling jax;      /* "jax ..."; all false by default */
    int nstmts;
    cg_stmt **stmts;          /* top-level program */
    int nexpects;
    cg_expect **expects;
    cg_limits limits;         /* what it was loaded under (cg_load_case); defaults if parsed directly */
    char *text; /* the file's bytes as parsed (cg_load_case), owned; NULL if parsed directly */
    size_t text_len;
} cg_case;

/* Parse the text of a case file. `file` is used in messages and stored.
 * Returns the case, or NULL with st holding "file:line:col: expected ...".
 * Never crashes on any input bytes. */
cg_case *cg_parse_case(const char *file, const char *text, size_t len, cg_status *st);


/* Read and parse a regular file of at most lim->case_bytes bytes (lim NULL
 * or a zero field: the default), keeping lim in the case,
 * never blocking on a FIFO or device and never reading past the limit. NULL
 * with st "file: cannot read: <strerror>", "file: expected a case file, got
 * a FIFO", "file: expected a case file of at most N bytes ...", or a parse
 * error. */
cg_case *cg_load_case(const char *path, const cg_limits *lim, cg_status *st);
/* "a FIFO", "a directory", ...: what a path that is not a case file is. */
const char *cg_file_type_name(mode_t mode);

void cg_case_free(cg_case *c);

/* The built-in names of the language, for the parser's "unknown op" check and
 * for documentation: tensor functions, collectives and statements. */
bool cg_is_known_function(const char *name);

/* Print a case back as case-language text (used by --explain and tests). */
void cg_case_print(FILE *f, const cg_case *c);
/* The jax line's key number k (0, 1, ...): its word in s ("invarying"),
 * its name in *key ("all_gather"); NULL past the last key. */
const char *cg_jax_spelling_word(const cg_jax_spelling *s, int k, const char **key);
/* Whether s differs from the usual spelling (a jax line worth writing). */
bool cg_jax_spelling_set(const cg_jax_spelling *s);

#endif
