/* parse_expr.c — expressions of the case language (grammar in parser.c).
 *
 * Nesting is capped at CG_MAX_NESTING so that neither this parser nor the
 * recursive walks over the tree (printing, freeing, interpreting) can run out
 * of stack. Each nested sub-expression counts one level, and so does each
 * link of an operator or indexing chain (a+b+c+...), since those build a tree
 * as deep as the chain is long. */
#include "parse_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cg_p_enter(cg_parser *p)
{
    if (p->depth >= CG_MAX_NESTING) {
        cg_error_at(&p->st, cg_p_here(p), "expected at most %d nested expressions, got more",
                    CG_MAX_NESTING);
        return false;
    }
    p->depth++;
    return true;
}

bool cg_p_number(cg_parser *p, const char *what, double *out)
{
    if (cg_p_tok(p)->kind != CG_TOK_NUM) {
        cg_error_at(&p->st, cg_p_here(p), "expected %s, got %s", what, cg_p_got(p));
        return false;
    }
    char *s = cg_p_strndup(p, cg_p_tok(p)->text, cg_p_tok(p)->len);
    if (!s)
        return false;
    *out = strtod(s, NULL);
    free(s);
    if (!isfinite(*out)) {
        cg_error_at(&p->st, cg_p_here(p), "expected a finite number, got %s", cg_p_got(p));
        return false;
    }
    return true;
}

bool cg_p_expect_close(cg_parser *p, const char *close, const char *open, int line, int col)
{
    if (cg_p_is(p, close)) {
        cg_p_advance(p);
        return !cg_p_failed(p);
    }
    char what[64];
    snprintf(what, sizeof what, "'%s' to close '%s' at %d:%d", close, open, line, col);
    cg_error_at(&p->st, cg_p_here(p), "expected %s, got %s", what, cg_p_got(p));
    return false;
}

/* A node owning kids[0..n-1] (some may be NULL: missing slice bounds). */
static cg_expr *node(cg_parser *p, cg_expr_kind kind, int line, int col, int n, cg_expr **kids)
{
    cg_expr *e = cg_p_alloc(p, sizeof *e);
    if (e && n > 0 && !(e->args = cg_p_alloc(p, (size_t)n * sizeof *e->args))) {
        free(e);
        e = NULL;
    }
    if (!e) {
        for (int i = 0; i < n; i++)
            cg_expr_free(kids[i]);
        return NULL;
    }
    e->kind = kind;
    e->pos = cg_p_pos(p, line, col);
    e->nargs = n;
    for (int i = 0; i < n; i++)
        e->args[i] = kids[i];
    return e;
}

static cg_expr *operator_node(cg_parser *p, cg_opcode op, const cg_token *at, cg_expr *a, cg_expr *b)
{
    if (!a || !b) {
        cg_expr_free(a);
        cg_expr_free(b);
        return NULL;
    }
    cg_expr *kids[2] = {a, b};
    cg_expr *e = node(p, CG_E_BINARY, at->line, at->col, 2, kids);
    if (e)
        e->op = op;
    return e;
}

/* ---- binary levels ------------------------------------------------------- */

typedef struct binop {
    const char *text;
    cg_opcode op;
} binop;

enum { LEVEL_OR, LEVEL_AND, LEVEL_CMP, LEVEL_ADD, LEVEL_MUL, NLEVELS };

static const binop level_ops[NLEVELS][7] = {
    {{"||", CG_OP_OR}},
    {{"&&", CG_OP_AND}},
    {{"==", CG_OP_EQ}, {"!=", CG_OP_NE}, {"<", CG_OP_LT}, {"<=", CG_OP_LE}, {">", CG_OP_GT}, {">=", CG_OP_GE}},
    {{"+", CG_OP_ADD}, {"-", CG_OP_SUB}},
    {{"*", CG_OP_MUL}, {"/", CG_OP_DIV}, {"%", CG_OP_MOD}, {"@", CG_OP_MATMUL}},
};

static const binop *match_op(const cg_parser *p, int level)
{
    for (const binop *b = level_ops[level]; b->text; b++)
        if (cg_p_is(p, b->text))
            return b;
    return NULL;
}

static cg_expr *parse_unary(cg_parser *p);

static cg_expr *parse_level(cg_parser *p, int level)
{
    cg_expr *left = level + 1 < NLEVELS ? parse_level(p, level + 1) : parse_unary(p);
    int links = 0;
    for (const binop *b; left && (b = match_op(p, level));) {
        if (level == LEVEL_CMP && links > 0) {
            cg_error_at(&p->st, cg_p_here(p),
                        "expected a single comparison (they do not chain), got %s", cg_p_got(p));
        } else if (cg_p_enter(p)) {
            links++;
            cg_token at = p->tok;
            cg_p_advance(p);
            cg_expr *right = level + 1 < NLEVELS ? parse_level(p, level + 1) : parse_unary(p);
            left = operator_node(p, b->op, &at, left, right);
            continue;
        }
        cg_expr_free(left);
        left = NULL;
    }
    p->depth -= links;
    return left;
}

/* ---- unary, power, postfix ---------------------------------------------- */

static cg_expr *parse_postfix(cg_parser *p);

static cg_expr *parse_power(cg_parser *p)
{
    cg_expr *base = parse_postfix(p);
    if (!base || !cg_p_is(p, "**"))
        return base;
    if (!cg_p_enter(p)) {
        cg_expr_free(base);
        return NULL;
    }
    cg_token at = p->tok;
    cg_p_advance(p);
    cg_expr *e = operator_node(p, CG_OP_POW, &at, base, parse_unary(p));
    p->depth--;
    return e;
}

static cg_expr *parse_unary(cg_parser *p)
{
    bool neg = cg_p_is(p, "-");
    if (!neg && !cg_p_is(p, "!"))
        return parse_power(p);
    if (!cg_p_enter(p))
        return NULL;
    cg_token at = p->tok;
    cg_p_advance(p);
    cg_expr *a = parse_unary(p);
    cg_expr *e = a ? node(p, CG_E_UNARY, at.line, at.col, 1, &a) : NULL;
    if (e)
        e->op = neg ? CG_OP_NEG : CG_OP_NOT;
    p->depth--;
    return e;
}

/* base[i] or base[lo:hi] with either bound optional; line:col is where base starts. */
static cg_expr *parse_index(cg_parser *p, cg_expr *base, int line, int col)
{
    int bl = cg_p_tok(p)->line, bc = cg_p_tok(p)->col;
    cg_expr *kids[3] = {base, NULL, NULL};
    bool slice = false, ok = true;
    cg_p_advance(p); /* '[' */
    if (!cg_p_is(p, ":"))
        ok = (kids[1] = cg_parse_expr(p)) != NULL;
    if (ok && cg_p_is(p, ":")) {
        slice = true;
        cg_p_advance(p);
        if (!cg_p_is(p, "]"))
            ok = (kids[2] = cg_parse_expr(p)) != NULL;
    }
    if (ok)
        ok = cg_p_expect_close(p, "]", "[", bl, bc);
    if (!ok) {
        for (int i = 0; i < 3; i++)
            cg_expr_free(kids[i]);
        return NULL;
    }
    cg_expr *e = node(p, CG_E_INDEX, line, col, slice ? 3 : 2, kids);
    if (e)
        e->is_slice = slice;
    return e;
}

static cg_expr *parse_primary(cg_parser *p);

static cg_expr *parse_postfix(cg_parser *p)
{
    int line = cg_p_tok(p)->line, col = cg_p_tok(p)->col, links = 0;
    cg_expr *e = parse_primary(p);
    while (e && cg_p_is(p, "[")) {
        if (!cg_p_enter(p)) {
            cg_expr_free(e);
            e = NULL;
            break;
        }
        links++;
        e = parse_index(p, e, line, col);
    }
    p->depth -= links;
    return e;
}

/* ---- primaries ----------------------------------------------------------- */

/* Items into e->args: expr {',' expr} up to `close`. */
static bool parse_items(cg_parser *p, cg_expr *e, const char *close, const char *open, int line, int col)
{
    int cap = 0;
    for (;;) {
        cg_expr *item = cg_parse_expr(p);
        if (!item || !cg_p_grow(p, &e->args, e->nargs, &cap, sizeof *e->args)) {
            cg_expr_free(item);
            return false;
        }
        e->args[e->nargs++] = item;
        if (!cg_p_is(p, ","))
            return cg_p_expect_close(p, close, open, line, col);
        cg_p_advance(p);
    }
}

static cg_expr *parse_list(cg_parser *p)
{
    int line = cg_p_tok(p)->line, col = cg_p_tok(p)->col;
    cg_expr *e = node(p, CG_E_LIST, line, col, 0, NULL);
    if (!e)
        return NULL;
    cg_p_advance(p); /* '[' */
    if (!parse_items(p, e, "]", "[", line, col)) {
        cg_expr_free(e);
        return NULL;
    }
    return e;
}

static cg_expr *parse_paren(cg_parser *p)
{
    int line = cg_p_tok(p)->line, col = cg_p_tok(p)->col;
    cg_p_advance(p); /* '(' */
    cg_expr *e = cg_parse_expr(p);
    if (e && !cg_p_expect_close(p, ")", "(", line, col)) {
        cg_expr_free(e);
        return NULL;
    }
    return e;
}

cg_expr *cg_p_leaf(cg_parser *p, cg_expr_kind kind, bool named)
{
    cg_expr *e = node(p, kind, cg_p_tok(p)->line, cg_p_tok(p)->col, 0, NULL);
    if (e && named && !(e->name = cg_p_strndup(p, cg_p_tok(p)->text, cg_p_tok(p)->len))) {
        cg_expr_free(e);
        return NULL;
    }
    if (e)
        cg_p_advance(p);
    return e;
}

static bool is_redop_word(const cg_token *t)
{
    return cg_tok_is_name(t, "sum") || cg_tok_is_name(t, "avg") || cg_tok_is_name(t, "prod") ||
           cg_tok_is_name(t, "max") || cg_tok_is_name(t, "min");
}

/* A tensor name; in expectations it is checked once the whole file is read. */
static cg_expr *parse_tensor_name(cg_parser *p)
{
    const cg_token *t = cg_p_tok(p);
    if (!p->defer_names && !cg_p_is_defined(p, t->text, t->len)) {
        cg_error_at(&p->st, cg_p_here(p), "expected a defined tensor name, got %s", cg_p_got(p));
        return NULL;
    }
    cg_check check = {CG_CHECK_NAME, t->line, t->col, NULL, 0};
    cg_expr *e = cg_p_leaf(p, CG_E_NAME, true);
    if (e && p->defer_names) {
        check.name = e->name;
        if (!cg_p_defer(p, check)) {
            cg_expr_free(e);
            return NULL;
        }
    }
    return e;
}

static cg_expr *parse_identifier(cg_parser *p)
{
    const cg_token t = p->tok;
    if (cg_tok_is_name(&t, "rank"))
        return cg_p_leaf(p, CG_E_RANK, false);
    if (cg_tok_is_name(&t, "world"))
        return cg_p_leaf(p, CG_E_WORLD, false);
    cg_token next = cg_p_peek(p);
    if (cg_tok_is(&next, "("))
        return cg_parse_call(p, false);
    if (is_redop_word(&t))
        return cg_p_leaf(p, CG_E_WORD, true);
    if (cg_find_function(t.text, t.len)) {
        char what[80];
        snprintf(what, sizeof what, "'(' after '%.*s'", (int)t.len, t.text);
        cg_p_advance(p);
        cg_error_at(&p->st, cg_p_here(p), "expected %s, got %s", what, cg_p_got(p));
        return NULL;
    }
    if (cg_p_is_reserved(t.text, t.len)) {
        cg_error_at(&p->st, cg_p_here(p), "expected an expression, got %s", cg_p_got(p));
        return NULL;
    }
    return parse_tensor_name(p);
}

static cg_expr *parse_primary(cg_parser *p)
{
    if (cg_p_tok(p)->kind == CG_TOK_NUM) {
        double v;
        if (!cg_p_number(p, "a number", &v))
            return NULL;
        cg_expr *e = cg_p_leaf(p, CG_E_NUM, false);
        if (e)
            e->num = v;
        return e;
    }
    if (cg_p_tok(p)->kind == CG_TOK_NAME)
        return parse_identifier(p);
    if (cg_p_is(p, "("))
        return parse_paren(p);
    if (cg_p_is(p, "["))
        return parse_list(p);
    cg_error_at(&p->st, cg_p_here(p), "expected an expression, got %s", cg_p_got(p));
    return NULL;
}

cg_expr *cg_parse_expr(cg_parser *p)
{
    if (!cg_p_enter(p))
        return NULL;
    int line = cg_p_tok(p)->line, col = cg_p_tok(p)->col;
    cg_expr *e = parse_level(p, LEVEL_OR);
    if (e && cg_p_is(p, "?")) {
        cg_token q = p->tok;
        cg_expr *kids[3] = {e, NULL, NULL};
        cg_p_advance(p);
        if ((kids[1] = cg_parse_expr(p)) && !cg_p_is(p, ":")) {
            char what[64];
            snprintf(what, sizeof what, "':' to match '?' at %d:%d", q.line, q.col);
            cg_error_at(&p->st, cg_p_here(p), "expected %s, got %s", what, cg_p_got(p));
        } else if (kids[1]) {
            cg_p_advance(p);
            kids[2] = cg_parse_expr(p);
        }
        if (kids[2]) {
            e = node(p, CG_E_TERNARY, line, col, 3, kids);
        } else {
            for (int i = 0; i < 3; i++)
                cg_expr_free(kids[i]);
            e = NULL;
        }
    }
    p->depth--;
    return e;
}
