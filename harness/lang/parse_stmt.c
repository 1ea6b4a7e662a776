/* parse_stmt.c — the program and statement levels of the case language
 * (parser.c has the grammar): lines, assignments, call statements, on-blocks. */
#include "parse_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- statements --------------------------------------------------------- */

static cg_stmt *new_stmt(cg_parser *p, cg_stmt_kind kind)
{
    cg_stmt *s = cg_p_alloc(p, sizeof *s);
    if (s) {
        s->kind = kind;
        s->pos = cg_p_here(p);
        s->index = p->nstmts_made++;
    }
    return s;
}

static bool push_stmt(cg_parser *p, cg_stmt ***list, int *n, int *cap, cg_stmt *s)
{
    if (!cg_p_grow(p, list, *n, cap, sizeof **list)) {
        cg_stmt_free(s);
        return false;
    }
    (*list)[(*n)++] = s;
    return true;
}

static bool end_statement(cg_parser *p)
{
    if (!cg_p_at_statement_end(p)) {
        cg_error_at(&p->st, cg_p_here(p), "expected end of line, got %s", cg_p_got(p));
        return false;
    }
    if (cg_p_tok(p)->kind != CG_TOK_EOF)
        cg_p_advance(p);
    return !cg_p_failed(p);
}

static void skip_separators(cg_parser *p)
{
    while (cg_p_tok(p)->kind == CG_TOK_NEWLINE || cg_p_is(p, ";"))
        cg_p_advance(p);
}

/* One target of an assignment: a fresh, unreserved name. */
static bool parse_target(cg_parser *p, cg_stmt *s, int *cap)
{
    const cg_token *t = cg_p_tok(p);
    if (t->kind != CG_TOK_NAME) {
        cg_error_at(&p->st, cg_p_here(p), "expected a tensor name, got %s", cg_p_got(p));
        return false;
    }
    if (cg_p_is_reserved(t->text, t->len)) {
        cg_error_at(&p->st, cg_p_pos(p, t->line, t->col),
                    "expected a tensor name, got the reserved word '%.*s'", (int)t->len, t->text);
        return false;
    }
    for (int i = 0; i < s->nnames; i++)
        if (cg_p_name_cmp(s->names[i], t->text, t->len) == 0) {
            cg_error_at(&p->st, cg_p_pos(p, t->line, t->col),
                        "expected distinct names, got '%s' twice", s->names[i]);
            return false;
        }
    if (!cg_p_grow(p, &s->names, s->nnames, cap, sizeof *s->names))
        return false;
    if (!(s->names[s->nnames] = cg_p_strndup(p, t->text, t->len)))
        return false;
    s->nnames++;
    cg_p_advance(p);
    return true;
}

static cg_stmt *parse_assignment(cg_parser *p)
{
    cg_stmt *s = new_stmt(p, CG_S_ASSIGN);
    int cap = 0;
    bool ok = s != NULL;
    while (ok && (ok = parse_target(p, s, &cap)) && cg_p_is(p, ","))
        cg_p_advance(p);
    if (ok && !cg_p_is(p, "=")) {
        cg_error_at(&p->st, cg_p_here(p), "expected %s, got %s",
                    s->nnames == 1 ? "'=' or ','" : "'='", cg_p_got(p));
        ok = false;
    }
    if (ok) {
        cg_p_advance(p);
        ok = (s->expr = cg_parse_expr(p)) != NULL;
    }
    /* Defined only now, so `x = x + 1` needs an earlier x. */
    for (int i = 0; ok && i < s->nnames; i++)
        ok = cg_p_define(p, s->names[i]);
    if (!ok) {
        cg_stmt_free(s);
        return NULL;
    }
    return s;
}

static cg_stmt *parse_call_statement(cg_parser *p)
{
    const cg_token *t = cg_p_tok(p);
    const cg_function *f = cg_find_function(t->text, t->len);
    if (!f) {
        cg_error_at(&p->st, cg_p_here(p), "expected a known function, got %s", cg_p_got(p));
        return NULL;
    }
    if (!f->statement) {
        cg_error_at(&p->st, cg_p_here(p),
                    "expected a statement call (backward, zero_grad or send), got %s", cg_p_got(p));
        return NULL;
    }
    cg_stmt *s = new_stmt(p, CG_S_CALL);
    if (s && !(s->expr = cg_parse_call(p, true))) {
        cg_stmt_free(s);
        return NULL;
    }
    return s;
}

static cg_stmt *parse_statement(cg_parser *p)
{
    const cg_token *t = cg_p_tok(p);
    if (t->kind != CG_TOK_NAME) {
        cg_error_at(&p->st, cg_p_here(p), "expected a statement, got %s", cg_p_got(p));
        return NULL;
    }
    if (p->in_block && cg_tok_is_name(t, "on")) {
        cg_error_at(&p->st, cg_p_here(p),
                    "expected a statement inside an on-block (they do not nest), got %s",
                    cg_p_got(p));
        return NULL;
    }
    if (p->in_block && (cg_is_header_word(t) || cg_tok_is_name(t, "expect"))) {
        cg_error_at(&p->st, cg_p_here(p), "expected a statement inside an on-block, got %s",
                    cg_p_got(p));
        return NULL;
    }
    cg_token next = cg_p_peek(p);
    return cg_tok_is(&next, "(") ? parse_call_statement(p) : parse_assignment(p);
}

static bool parse_block_body(cg_parser *p, cg_stmt *s)
{
    int line = cg_p_tok(p)->line, col = cg_p_tok(p)->col, cap = 0;
    cg_p_advance(p); /* '{' */
    p->in_block = true;
    for (;;) {
        skip_separators(p);
        if (cg_p_is(p, "}") || cg_p_failed(p))
            break;
        if (cg_p_tok(p)->kind == CG_TOK_EOF) {
            char what[64];
            snprintf(what, sizeof what, "'}' to close '{' at %d:%d", line, col);
            cg_error_at(&p->st, cg_p_here(p), "expected %s, got %s", what, cg_p_got(p));
            break;
        }
        cg_stmt *body = parse_statement(p);
        /* the last statement may close the block on its own line: on 0 { send(x, 1) } */
        if (!body || !push_stmt(p, &s->body, &s->nbody, &cap, body) || (!cg_p_is(p, "}") && !end_statement(p)))
            break;
    }
    p->in_block = false;
    if (cg_p_failed(p))
        return false;
    cg_p_advance(p); /* '}' */
    return !cg_p_failed(p);
}

static cg_stmt *parse_on_block(cg_parser *p)
{
    cg_stmt *s = new_stmt(p, CG_S_ON);
    int cap = 0;
    bool ok = s != NULL;
    if (ok)
        cg_p_advance(p); /* 'on' */
    for (bool more = ok; more;) {
        cg_expr *r = cg_parse_expr(p);
        ok = r && cg_p_grow(p, &s->ranks, s->nranks, &cap, sizeof *s->ranks);
        if (!ok) {
            cg_expr_free(r);
            break;
        }
        s->ranks[s->nranks++] = r;
        if ((more = cg_p_is(p, ",")))
            cg_p_advance(p);
    }
    if (ok && !cg_p_is(p, "{")) {
        cg_error_at(&p->st, cg_p_here(p), "expected ',' or '{', got %s", cg_p_got(p));
        ok = false;
    }
    if (!ok || !parse_block_body(p, s)) {
        cg_stmt_free(s);
        return NULL;
    }
    return s;
}

/* ---- the program -------------------------------------------------------- */

static bool parse_line(cg_parser *p)
{
    cg_case *c = p->c;
    cg_stmt *s;
    if (cg_is_header_word(cg_p_tok(p)))
        return cg_parse_header(p);
    if (cg_p_is_name(p, "expect"))
        return cg_parse_expect(p);
    s = cg_p_is_name(p, "on") ? parse_on_block(p) : parse_statement(p);
    return s && push_stmt(p, &c->stmts, &c->nstmts, &p->cap_stmts, s);
}

void cg_p_program(cg_parser *p)
{
    while (!cg_p_failed(p)) {
        skip_separators(p);
        if (cg_p_tok(p)->kind == CG_TOK_EOF || !parse_line(p) || !end_statement(p))
            return;
    }
}

