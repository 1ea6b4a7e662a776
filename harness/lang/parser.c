/* parser.c — the case language: a hand-written recursive-descent parser.
 * This file holds the parser's plumbing and the entry; the program and
 * statement levels are in parse_stmt.c, expressions in parse_expr.c, header lines in parse_header.c,
 * expectations and the end-of-file checks in parse_expect.c.
 *
 * Grammar (NL = newline; ';' may stand for NL; `#` starts a comment except in
 * source text; NL inside ( ) or [ ] continues the line, see lexer.h):
 *
 *   file      := { line? (';' | NL) } EOF
 *   line      := header | expect | on_block | stmt
 *   header    := 'case' CASENAME | 'source' TEXT | 'world' INT
 *              | 'worlds' witem {',' witem} | 'dtype' NAME
 *              | 'tolerance' (NUM | ('rtol' '=' NUM | 'atol' '=' NUM)+)
 *              | 'seed' INT
 *              | 'jax' JAXKEY '=' NAME {JAXKEY '=' NAME}  (each at most once;
 *                  all_gather=varying|invarying, loss=varying|replicated,
 *                  backward=outside|in_body)
 *   witem     := INT ['..' INT]                      (sizes 1..64)
 *   on_block  := 'on' expr {',' expr} '{' { [stmt] (';' | NL) } [stmt] '}'
 *   stmt      := NAME {',' NAME} '=' expr
 *              | ('backward' | 'zero_grad' | 'send') '(' args ')'
 *   expect    := 'expect' ('grad' | 'value') '(' NAME ')' ['on' INT {',' INT}]
 *                  [('per_rank' | 'replicated' | 'own_loss')]    (grad only)
 *                  ['rules' '=' RULEWORD] values
 *              | 'expect' 'error' ['rules' '=' RULEWORD] STRING
 *   values    := nlist {nlist} | '=' expr | 'undefined'  (undefined: replicated)
 *   nlist     := '[' (nlist | ['-'] NUM) {',' (nlist | ['-'] NUM)} ']'
 *
 *   expr      := or ['?' expr ':' expr]               (right associative)
 *   or        := and {'||' and}
 *   and       := cmp {'&&' cmp}
 *   cmp       := add [('==' | '!=' | '<' | '<=' | '>' | '>=') add]   (no chains)
 *   add       := mul {('+' | '-') mul}
 *   mul       := unary {('*' | '/' | '%' | '@') unary}
 *   unary     := ('-' | '!') unary | power
 *   power     := postfix ['**' unary]                 (so -2**2 = -(2**2))
 *   postfix   := primary {'[' (expr | [expr] ':' [expr]) ']'}
 *   primary   := NUM | 'rank' | 'world' | NAME | REDOP | call | list | '(' expr ')'
 *   call      := FUNC '(' [args] ')'
 *   args      := expr {',' expr} {',' KEYWORD '=' expr} | KEYWORD '=' expr {...}
 *   list      := '[' expr {',' expr} ']'
 *   REDOP     := sum | avg | prod | max | min         (not followed by '(')
 *
 * The first error stops the parse: "FILE:LINE:COL: expected WHAT, got WHAT".
 * After it the current token reads as end of file, so every loop unwinds and
 * each function frees what it built. */
#include "parse_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------- */

cg_srcpos cg_p_here(const cg_parser *p) { return cg_p_pos(p, cg_p_tok(p)->line, cg_p_tok(p)->col); }

const char *cg_p_got(cg_parser *p)
{
    cg_tok_describe(cg_p_tok(p), p->got, sizeof p->got);
    return p->got;
}

/* ---- tokens ------------------------------------------------------------- */

void cg_p_advance_mode(cg_parser *p, cg_lex_mode mode)
{
    if (cg_p_failed(p))
        return;
    p->tok = cg_lex_next(&p->lx, mode);
    if (p->tok.kind == CG_TOK_ERROR)
        cg_error_at(&p->st, cg_p_here(p), "%s", p->lx.msg);
}

void cg_p_advance(cg_parser *p) { cg_p_advance_mode(p, CG_LEX_CODE); }

cg_token cg_p_peek(const cg_parser *p)
{
    cg_lexer copy = p->lx;
    return cg_lex_next(&copy, CG_LEX_CODE);
}

bool cg_p_is(const cg_parser *p, const char *punct) { return cg_tok_is(cg_p_tok(p), punct); }
bool cg_p_is_name(const cg_parser *p, const char *name)
{
    return cg_tok_is_name(cg_p_tok(p), name);
}

bool cg_p_at_statement_end(const cg_parser *p)
{
    return cg_p_tok(p)->kind == CG_TOK_NEWLINE || cg_p_tok(p)->kind == CG_TOK_EOF ||
           cg_p_is(p, ";");
}

bool cg_p_tok_uint(const cg_token *t, unsigned long long max, unsigned long long *out)
{
    if (t->kind != CG_TOK_NUM)
        return false;
    unsigned long long v = 0;
    for (size_t i = 0; i < t->len; i++) {
        unsigned d = (unsigned)(t->text[i] - '0');
        if (d > 9 || v > max / 10 || (v == max / 10 && d > max % 10))
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool cg_p_is_reserved(const char *name, size_t len)
{
    static const char *const words[] = {"rank", "world", "on", "expect", "case", "source", "worlds", "dtype",
                                        "tolerance", "seed", "jax", "sum", "avg", "prod", "max", "min"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == len && memcmp(words[i], name, len) == 0)
            return true;
    return cg_find_function(name, len) != NULL;
}

/* ---- memory ------------------------------------------------------------- */

void *cg_p_alloc(cg_parser *p, size_t n)
{
    void *m = calloc(1, n);
    if (!m)
        cg_error_at(&p->st, cg_p_here(p), "expected memory, got out of memory");
    return m;
}

char *cg_p_strndup(cg_parser *p, const char *s, size_t n)
{
    char *d = cg_p_alloc(p, n + 1);
    if (d && n)
        memcpy(d, s, n);
    return d;
}

bool cg_p_grow(cg_parser *p, void *arr, int n, int *cap, size_t elsize)
{
    if (n < *cap)
        return true;
    if (*cap > (1 << 28))
        return cg_error_at(&p->st, cg_p_here(p), "expected memory, got out of memory") == 0;
    void *old;
    memcpy(&old, arr, sizeof old);
    int ncap = *cap ? *cap * 2 : 4;
    void *grown = realloc(old, (size_t)ncap * elsize);
    if (!grown)
        return cg_error_at(&p->st, cg_p_here(p), "expected memory, got out of memory") == 0;
    memcpy(arr, &grown, sizeof grown);
    *cap = ncap;
    return true;
}

cg_srcpos cg_p_pos(const cg_parser *p, int line, int col)
{
    cg_srcpos pos = {p->c->file, line, col};
    return pos;
}

bool cg_p_defer(cg_parser *p, cg_check check)
{
    if (!cg_p_grow(p, &p->checks, p->nchecks, &p->cap_checks, sizeof *p->checks))
        return false;
    p->checks[p->nchecks++] = check;
    return true;
}

/* ---- the set of assigned names (sorted, for binary search) --------------- */

int cg_p_name_cmp(const char *a, const char *s, size_t len)
{
    int r = strncmp(a, s, len);
    return r ? r : (a[len] != '\0');
}

/* Index of name in p->defined, or -(insertion point) - 1. */
static int find_defined(const cg_parser *p, const char *name, size_t len)
{
    int lo = 0, hi = p->ndefined;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, r = cg_p_name_cmp(p->defined[mid], name, len);
        if (r == 0)
            return mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -lo - 1;
}

bool cg_p_is_defined(const cg_parser *p, const char *name, size_t len)
{
    return find_defined(p, name, len) >= 0;
}

bool cg_p_define(cg_parser *p, char *name)
{
    int at = find_defined(p, name, strlen(name));
    if (at >= 0)
        return true;
    at = -at - 1;
    if (!cg_p_grow(p, &p->defined, p->ndefined, &p->cap_defined, sizeof *p->defined))
        return false;
    memmove(p->defined + at + 1, p->defined + at, (size_t)(p->ndefined - at) * sizeof *p->defined);
    p->defined[at] = name;
    p->ndefined++;
    return true;
}

/* FNV-1a, 64 bits: the default seed, stable across platforms. */
static unsigned long long fnv1a64(const char *s)
{
    unsigned long long h = 14695981039346656037ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static cg_case *new_case(const char *file, cg_status *st)
{
    cg_case *c = calloc(1, sizeof *c);
    if (c && (c->file = strdup(file))) {
        c->dtype = CG_F64;
        c->limits = cg_limits_or_default(NULL);
        return c;
    }
    free(c);
    cg_error_infra(st, "%s: expected memory, got out of memory", file);
    return NULL;
}

cg_case *cg_parse_case(const char *file, const char *text, size_t len, cg_status *st)
{
    cg_parser p;
    memset(&p, 0, sizeof p);
    if (!(p.c = new_case(file ? file : "<input>", st)))
        return NULL;
    cg_lex_init(&p.lx, text, len);
    cg_p_advance(&p);
    cg_p_program(&p);
    if (!cg_p_failed(&p))
        cg_run_checks(&p);
    free(p.defined);
    free(p.checks);
    if (cg_p_failed(&p)) {
        if (st)
            *st = p.st;
        cg_case_free(p.c);
        return NULL;
    }
    if (!p.c->has_seed)
        p.c->seed = fnv1a64(p.c->name);
    return p.c;
}
