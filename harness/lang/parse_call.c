/* parse_call.c — calls to built-in functions: f(positional..., kw=value...).
 * Which functions exist, their arities and keywords come from the table in
 * ir.c; the arity counts positional and keyword arguments together, and a
 * keyword may not repeat an argument already given by position. */
#include "parse_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int keyword_index(const cg_function *f, const cg_token *t)
{
    for (int k = 0; k < 3 && f->keywords[k]; k++)
        if (cg_tok_is_name(t, f->keywords[k]))
            return k;
    return -1;
}

static bool bad_keyword(cg_parser *p, const cg_function *f, const cg_token *t)
{
    if (!f->keywords[0])
        cg_error_at(&p->st, cg_p_pos(p, t->line, t->col),
                    "expected no keyword arguments for '%s', got '%.*s'", f->name, (int)t->len,
                    t->text);
    else
        cg_error_at(&p->st, cg_p_pos(p, t->line, t->col),
                    "expected a keyword of '%s' (%s%s%s%s%s), got '%.*s'", f->name, f->keywords[0],
                    f->keywords[1] ? ", " : "", f->keywords[1] ? f->keywords[1] : "",
                    f->keywords[2] ? ", " : "", f->keywords[2] ? f->keywords[2] : "", (int)t->len,
                    t->text);
    return false;
}

/* `kw =` at the current token: known to f, given once, not also by position. */
static bool parse_keyword(cg_parser *p, const cg_function *f, const cg_expr *e, int npositional, char **out)
{
    const cg_token t = p->tok;
    int k = keyword_index(f, &t);
    if (k < 0)
        return bad_keyword(p, f, &t);
    for (int i = 0; i < e->nargs; i++)
        if (e->kwnames[i] && strcmp(e->kwnames[i], f->keywords[k]) == 0) {
            cg_error_at(&p->st, cg_p_pos(p, t.line, t.col), "expected '%s' once, got it twice",
                        f->keywords[k]);
            return false;
        }
    if (f->kw_first >= 0 && npositional > f->kw_first + k) {
        cg_error_at(&p->st, cg_p_pos(p, t.line, t.col),
                    "expected '%s' by position or by keyword, got both", f->keywords[k]);
        return false;
    }
    if (!(*out = cg_p_strndup(p, t.text, t.len)))
        return false;
    cg_p_advance(p); /* the keyword */
    cg_p_advance(p); /* '=' */
    return !cg_p_failed(p);
}

typedef struct call_build {
    const cg_function *f;
    cg_expr *e;
    int cap_args, cap_kw, npositional;
} call_build;

static bool parse_argument(cg_parser *p, call_build *b)
{
    char *kw = NULL;
    cg_token next = cg_p_peek(p);
    if (cg_p_tok(p)->kind == CG_TOK_NAME && cg_tok_is(&next, "=")) {
        if (!parse_keyword(p, b->f, b->e, b->npositional, &kw)) {
            free(kw);
            return false;
        }
    } else if (b->npositional < b->e->nargs) {
        cg_error_at(&p->st, cg_p_here(p),
                    "expected a keyword argument (positional ones come first), got %s",
                    cg_p_got(p));
        return false;
    }
    cg_expr *arg = cg_parse_expr(p);
    cg_expr *e = b->e;
    if (!arg || !cg_p_grow(p, &e->args, e->nargs, &b->cap_args, sizeof *e->args) ||
        !cg_p_grow(p, &e->kwnames, e->nargs, &b->cap_kw, sizeof *e->kwnames)) {
        cg_expr_free(arg);
        free(kw);
        return false;
    }
    e->args[e->nargs] = arg;
    e->kwnames[e->nargs++] = kw;
    b->npositional += kw == NULL;
    return true;
}

static bool check_arity(cg_parser *p, const cg_expr *e, const cg_function *f, int npositional)
{
    /* Required arguments come by position: the interpreter reads a keyword
     * function's tensor at position 0, so cat(axis=0) must not get through. */
    int required = f->kw_first >= 0 && f->kw_first < f->min_args ? f->kw_first : f->min_args;
    if (e->nargs >= f->min_args && e->nargs <= f->max_args) {
        if (npositional >= required)
            return true;
        cg_error_at(&p->st, cg_p_pos(p, e->pos.line, e->pos.col),
                    "expected %d positional argument%s for '%s', got %d", required,
                    required == 1 ? "" : "s", f->name, npositional);
        return false;
    }
    char want[32];
    if (f->min_args == f->max_args)
        snprintf(want, sizeof want, "%d argument%s", f->min_args, f->min_args == 1 ? "" : "s");
    else
        snprintf(want, sizeof want, "%d..%d arguments", f->min_args, f->max_args);
    cg_error_at(&p->st, cg_p_pos(p, e->pos.line, e->pos.col), "expected %s for '%s', got %d", want,
                f->name, e->nargs);
    return false;
}

cg_expr *cg_parse_call(cg_parser *p, bool statement)
{
    const cg_token name = p->tok;
    call_build b = {cg_find_function(name.text, name.len), NULL, 0, 0, 0};
    if (!b.f) {
        cg_error_at(&p->st, cg_p_here(p), "expected a known function, got %s", cg_p_got(p));
        return NULL;
    }
    if (b.f->statement && !statement) {
        cg_error_at(&p->st, cg_p_pos(p, name.line, name.col),
                    "expected an expression, got the statement '%s'", b.f->name);
        return NULL;
    }
    if (!(b.e = cg_p_leaf(p, CG_E_CALL, true)))
        return NULL;
    int line = cg_p_tok(p)->line, col = cg_p_tok(p)->col;
    cg_p_advance(p); /* '(' */
    bool ok = true;
    if (!cg_p_is(p, ")"))
        while ((ok = parse_argument(p, &b)) && cg_p_is(p, ","))
            cg_p_advance(p);
    if (!ok || !cg_p_expect_close(p, ")", "(", line, col) || !check_arity(p, b.e, b.f, b.npositional)) {
        cg_expr_free(b.e);
        return NULL;
    }
    return b.e;
}
