/* parse_internal.h — shared between the parser's files (parser.c,
 * parse_expr.c, parse_call.c, parse_header.c, parse_expect.c) and ir.c: the parser state, the table of
 * built-in functions and the node destructors. Not part of the public API. */
#ifndef CG_PARSE_INTERNAL_H
#define CG_PARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_words.h"
#include "ir.h"
#include "lexer.h"
#include "op_table.h"

#define CG_MAX_NESTING 200

/* ---- built-in functions (ir.c) ------------------------------------------- */
typedef struct cg_function {
    const char *name;
    int min_args, max_args;    /* positional and keyword arguments together */
    const char *keywords[3];   /* accepted keywords, in positional order; NULL-padded */
    int kw_first;              /* positional index of keywords[0]; -1: keyword-only */
    bool statement;            /* backward, zero_grad, send: not an expression */
} cg_function;

const cg_function *cg_find_function(const char *name, size_t len); /* NULL if unknown */

void cg_expr_free(cg_expr *e);
void cg_stmt_free(cg_stmt *s);
void cg_expect_free(cg_expect *x);
/* "2", "1..4, 8": the case's world sizes, the last two joined by last_sep. */
void cg_format_worlds(const cg_case *c, const char *last_sep, char *buf, size_t n);

/* ---- parser state --------------------------------------------------------- */

/* A check that can only run once the whole file is read: expectations may
 * name tensors assigned later, and the world line may come last. */
typedef enum { CG_CHECK_NAME, CG_CHECK_RANK, CG_CHECK_LISTS } cg_check_kind;

typedef struct cg_check {
    cg_check_kind kind;
    int line, col;
    const char *name; /* CHECK_NAME: owned by the expectation */
    int value;        /* CHECK_RANK: the rank; CHECK_LISTS: the number of lists */
} cg_check;

enum { CG_HDR_CASE, CG_HDR_SOURCE, CG_HDR_WORLD, CG_HDR_DTYPE, CG_HDR_TOLERANCE, CG_HDR_SEED, CG_HDR_JAX, CG_NHDR };

typedef struct cg_parser {
    cg_lexer lx;
    cg_token tok; /* the current token, not yet consumed: read it with cg_p_tok */
    cg_case *c;
    cg_status st;          /* the first error (cg_error_at keeps it); it stops everything */
    char got[96];          /* cg_p_got's description of the current token */
    int depth;             /* expression nesting, capped at CG_MAX_NESTING */
    int nstmts_made;       /* for cg_stmt.index */
    int cap_stmts, cap_expects;
    bool in_block;         /* inside on ... { } */
    bool defer_names;      /* expectation expressions: names checked at the end */
    char **defined;        /* sorted; the strings belong to statements */
    int ndefined, cap_defined;
    cg_check *checks;
    int nchecks, cap_checks;
    int hdr_line[CG_NHDR]; /* where each header line was seen; 0 = not yet */
    int hdr_col[CG_NHDR];
} cg_parser;

/* Errors go into p->st with cg_error_at (status.h), which keeps the first:
 * "FILE:LINE:COL: expected WHAT, got <cg_p_got>". Once one is there the
 * parse has failed, and the current token reads as end of file (cg_p_tok),
 * so every loop unwinds and each function frees what it built. */
static inline bool cg_p_failed(const cg_parser *p) { return p->st.code != CG_EXIT_OK; }
static inline const cg_token *cg_p_tok(const cg_parser *p)
{
    static const cg_token eof = {.kind = CG_TOK_EOF};
    return cg_p_failed(p) ? &eof : &p->tok;
}
cg_srcpos cg_p_here(const cg_parser *p); /* the current token's place */
const char *cg_p_got(cg_parser *p);      /* the current token described, in p->got */

void cg_p_advance(cg_parser *p);
void cg_p_advance_mode(cg_parser *p, cg_lex_mode mode);
cg_token cg_p_peek(const cg_parser *p); /* the token after the current one */
bool cg_p_is(const cg_parser *p, const char *punct);
bool cg_p_is_name(const cg_parser *p, const char *name);
bool cg_p_at_statement_end(const cg_parser *p);

void *cg_p_alloc(cg_parser *p, size_t n);   /* zeroed */
char *cg_p_strndup(cg_parser *p, const char *s, size_t n);
/* Makes room for one more element in *arr (of *n, capacity *cap). */
bool cg_p_grow(cg_parser *p, void *arr, int n, int *cap, size_t elsize);
cg_srcpos cg_p_pos(const cg_parser *p, int line, int col);

bool cg_p_is_defined(const cg_parser *p, const char *name, size_t len);
bool cg_p_define(cg_parser *p, char *name);
/* strcmp of a with the len bytes at s (not terminated): 0 when equal. */
int cg_p_name_cmp(const char *a, const char *s, size_t len);
bool cg_p_defer(cg_parser *p, cg_check check);
/* An unsigned integer token (digits only) no larger than max. */
bool cg_p_tok_uint(const cg_token *t, unsigned long long max, unsigned long long *out);
bool cg_p_is_reserved(const char *name, size_t len);

/* parse_expr.c */
cg_expr *cg_parse_expr(cg_parser *p);
/* The current token as a finite number, else "expected WHAT, got ...". */
bool cg_p_number(cg_parser *p, const char *what, double *out);
bool cg_p_enter(cg_parser *p); /* one more level of nesting, if allowed */
/* Consumes `close`, or fails with "expected 'close' to close 'open' at L:C". */
bool cg_p_expect_close(cg_parser *p, const char *close, const char *open, int line, int col);
/* A node of `kind` at the current token (named after it if `named`), which it consumes. */
cg_expr *cg_p_leaf(cg_parser *p, cg_expr_kind kind, bool named);

/* parse_call.c: a call whose name is the current token and whose '(' follows
 * it; the statement-only functions are accepted only when `statement` is set. */
cg_expr *cg_parse_call(cg_parser *p, bool statement);

/* parse_stmt.c: the program, line by line, into p->c until the end of the
 * file or the first error */
void cg_p_program(cg_parser *p);

/* parse_header.c: header lines (case, source, world(s), dtype, tolerance, seed) */
bool cg_is_header_word(const cg_token *t);
bool cg_parse_header(cg_parser *p);

/* parse_expect.c: expectations, and the checks at the end of the file */
bool cg_parse_expect(cg_parser *p);
bool cg_run_checks(cg_parser *p);

#endif
