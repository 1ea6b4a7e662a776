/* parse_expect.c — the lines that say what a case must give: expectations
 * (grad/value lists, error and raises lines), and the checks that can only
 * run at the end of the file (required headers, names assigned later, list
 * counts against the world sizes). Header lines in parse_header.c; grammar
 * in parser.c. */
#include "parse_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- expectations -------------------------------------------------------- */

static bool parse_expect_ranks(cg_parser *p, cg_expect *x)
{
    int cap = 0;
    do {
        cg_p_advance(p); /* 'on' or ',' */
        unsigned long long r;
        if (!cg_p_tok_uint(cg_p_tok(p), 1u << 20, &r)) {
            cg_error_at(&p->st, cg_p_here(p), "expected a rank number, got %s", cg_p_got(p));
            return false;
        }
        cg_check check = {CG_CHECK_RANK, cg_p_tok(p)->line, cg_p_tok(p)->col, NULL, (int)r};
        if (!cg_p_defer(p, check) || !cg_p_grow(p, &x->ranks, x->nranks, &cap, sizeof *x->ranks))
            return false;
        x->ranks[x->nranks++] = (int)r;
        cg_p_advance(p);
    } while (cg_p_is(p, ","));
    return !cg_p_failed(p);
}

static bool parse_semantics(cg_parser *p, cg_expect *x)
{
    static const char *const words[] = {"per_rank", "replicated", "own_loss"};
    for (int i = 0; i < 3; i++)
        if (cg_p_is_name(p, words[i])) {
            x->semantics = (cg_semantics)i;
            cg_p_advance(p);
            return !cg_p_failed(p);
        }
    cg_error_at(&p->st, cg_p_here(p),
                "expected a semantics word (per_rank, replicated or own_loss), got %s",
                cg_p_got(p));
    return false;
}

static bool parse_rules(cg_parser *p, cg_expect *x)
{
    cg_p_advance(p); /* 'rules' */
    if (!cg_p_is(p, "=")) {
        cg_error_at(&p->st, cg_p_here(p), "expected '=' after 'rules', got %s", cg_p_got(p));
        return false;
    }
    cg_p_advance_mode(p, CG_LEX_RULES_WORD);
    if (cg_p_tok(p)->kind != CG_TOK_WORD) {
        cg_error_at(&p->st, cg_p_here(p), "expected a rule-set name, got %s", cg_p_got(p));
        return false;
    }
    /* A case file names a rule set; it never loads code: a path (or a
     * library name dlopen would search for) is refused here, so no run of
     * this case can reach dlopen with it. Plugins come from --rules only. */
    /* family[@version]: the version of digits and dots only, so no name
     * here can spell a library file */
    bool versioned = false;
    for (size_t i = 0; i < cg_p_tok(p)->len; i++) {
        char c = cg_p_tok(p)->text[i];
        bool digit = c >= '0' && c <= '9';
        bool ok = versioned  ? digit || (c == '.' && i > 0 && cg_p_tok(p)->text[i - 1] != '@')
                  : c == '@' ? i > 0 && i + 1 < cg_p_tok(p)->len
                             : (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || digit ||
                                   c == '-' || c == '_';
        versioned |= c == '@';
        if (!ok) {
            cg_error_at(
                &p->st, cg_p_here(p),
                "expected a rule-set name (letters, digits, '-', '_', then @VERSION of digits and "
                "dots); a case file cannot load a plugin, pass it with --rules FILE.so, got %s",
                cg_p_got(p));
            return false;
        }
    }
    if (!(x->rules = cg_p_strndup(p, cg_p_tok(p)->text, cg_p_tok(p)->len)))
        return false;
    x->rules_pos = (cg_srcpos){x->pos.file, cg_p_tok(p)->line, cg_p_tok(p)->col};
    cg_p_advance(p);
    return !cg_p_failed(p);
}

typedef struct number_list {
    double *v;
    int n, cap;
} number_list;

/* ['-'] NUM, appended to *out. */
static bool parse_list_number(cg_parser *p, number_list *out)
{
    bool neg = cg_p_is(p, "-");
    if (neg)
        cg_p_advance(p);
    double v;
    if (!cg_p_number(p, "a number", &v) || !cg_p_grow(p, &out->v, out->n, &out->cap, sizeof *out->v))
        return false;
    out->v[out->n++] = neg ? -v : v;
    cg_p_advance(p);
    return !cg_p_failed(p);
}

/* '[' ... ']' with nested lists flattened into *out. An empty list is the
 * values of an empty tensor (a rank that receives nothing). */
static bool parse_number_list(cg_parser *p, number_list *out)
{
    int line = cg_p_tok(p)->line, col = cg_p_tok(p)->col;
    if (!cg_p_enter(p))
        return false;
    cg_p_advance(p); /* '[' */
    bool ok = true;
    while (!cg_p_is(p, "]")) {
        ok = cg_p_is(p, "[") ? parse_number_list(p, out) : parse_list_number(p, out);
        if (!ok || !cg_p_is(p, ","))
            break;
        cg_p_advance(p);
        if (cg_p_is(p, "]")) { /* no trailing comma: [1, ] is a typo more often than not */
            cg_error_at(&p->st, cg_p_here(p), "expected a number, got %s", cg_p_got(p));
            ok = false;
            break;
        }
    }
    p->depth--;
    return ok && cg_p_expect_close(p, "]", "[", line, col);
}

static bool parse_value_lists(cg_parser *p, cg_expect *x)
{
    cg_check check = {CG_CHECK_LISTS, cg_p_tok(p)->line, cg_p_tok(p)->col, NULL, 0};
    int cap_len = 0, cap_lists = 0;
    while (cg_p_is(p, "[")) {
        number_list list = {NULL, 0, 0};
        if (!parse_number_list(p, &list) || !cg_p_grow(p, &x->lists, x->nlists, &cap_lists, sizeof *x->lists) ||
            !cg_p_grow(p, &x->list_len, x->nlists, &cap_len, sizeof *x->list_len)) {
            free(list.v);
            return false;
        }
        if (!list.v && !(list.v = cg_p_alloc(p, sizeof *list.v))) /* never NULL, even when empty */
            return false;
        x->lists[x->nlists] = list.v;
        x->list_len[x->nlists++] = list.n;
    }
    if (x->nranks > 0) { /* "on 0, 2 [a] [b]": one list per listed rank, in order; no list unchecked */
        if (x->nlists != x->nranks)
            cg_error_at(&p->st, cg_p_pos(p, check.line, check.col),
                        "expected %d value list%s (one per rank after 'on'), got %d", x->nranks,
                        x->nranks == 1 ? "" : "s", x->nlists);
        return !cg_p_failed(p);
    }
    check.value = x->nlists;
    return cg_p_defer(p, check);
}

static bool parse_values(cg_parser *p, cg_expect *x)
{
    if (cg_p_is(p, "["))
        return parse_value_lists(p, x);
    if (cg_p_is(p, "=")) {
        cg_p_advance(p);
        p->defer_names = true;
        x->expr = cg_parse_expr(p);
        p->defer_names = false;
        return x->expr != NULL;
    }
    if (cg_p_is_name(p, "undefined") && x->kind == CG_X_GRAD && x->semantics == CG_SEM_REPLICATED) {
        x->undefined = true;
        cg_p_advance(p);
        return !cg_p_failed(p);
    }
    if (cg_p_is_name(p, "undefined"))
        cg_error_at(&p->st, cg_p_here(p),
                    "expected values ([...] or = EXPR; undefined needs replicated), got %s",
                    cg_p_got(p));
    else
        cg_error_at(&p->st, cg_p_here(p), "expected values ([...], = EXPR or undefined), got %s",
                    cg_p_got(p));
    return false;
}

/* grad(NAME) / value(NAME) and what follows. */
static bool parse_tensor_expect(cg_parser *p, cg_expect *x)
{
    x->kind = cg_p_is_name(p, "grad") ? CG_X_GRAD : CG_X_VALUE;
    cg_p_advance(p);
    if (!cg_p_is(p, "(")) {
        cg_error_at(&p->st, cg_p_here(p), "expected %s, got %s",
                    x->kind == CG_X_GRAD ? "'(' after 'grad'" : "'(' after 'value'", cg_p_got(p));
        return false;
    }
    int line = cg_p_tok(p)->line, col = cg_p_tok(p)->col;
    cg_p_advance(p);
    if (cg_p_tok(p)->kind != CG_TOK_NAME) {
        cg_error_at(&p->st, cg_p_here(p), "expected a tensor name, got %s", cg_p_got(p));
        return false;
    }
    cg_check check = {CG_CHECK_NAME, cg_p_tok(p)->line, cg_p_tok(p)->col, NULL, 0};
    if (!(x->tensor = cg_p_strndup(p, cg_p_tok(p)->text, cg_p_tok(p)->len)))
        return false;
    check.name = x->tensor;
    cg_p_advance(p);
    if (!cg_p_expect_close(p, ")", "(", line, col) || !cg_p_defer(p, check) || (cg_p_is_name(p, "on") && !parse_expect_ranks(p, x)))
        return false;
    bool options = cg_p_is_name(p, "rules") || cg_p_is_name(p, "undefined");
    if (x->kind == CG_X_GRAD && cg_p_tok(p)->kind == CG_TOK_NAME && !options &&
        !parse_semantics(p, x))
        return false;
    if (cg_p_is_name(p, "rules") && !parse_rules(p, x))
        return false;
    return parse_values(p, x);
}

/* The text of a string token without quotes, escapes resolved. */
static char *string_value(cg_parser *p, const cg_token *t)
{
    char *s = cg_p_alloc(p, t->len);
    size_t n = 0;
    for (size_t i = 1; s && i + 1 < t->len; i++) {
        if (t->text[i] == '\\')
            i++;
        s[n++] = t->text[i];
    }
    return s;
}

/* error [rules=NAME] "message" | raises rules=NAME [at forward|backward] ["message"] */
static bool parse_error_expect(cg_parser *p, cg_expect *x)
{
    x->kind = CG_X_ERROR;
    x->raises = cg_p_is_name(p, "raises");
    cg_p_advance(p);                              /* 'error' or 'raises' */
    if (x->raises && !cg_p_is_name(p, "rules")) { /* the truth computes gradients */
        cg_error_at(&p->st, cg_p_here(p),
                    "expected rules=NAME after 'raises' (a framework refuses a case, the truth "
                    "does not), got %s",
                    cg_p_got(p));
        return false;
    }
    if (cg_p_is_name(p, "rules") && !parse_rules(p, x))
        return false;
    if (x->raises && cg_p_is_name(p, "at")) { /* the phase some rank raises in */
        cg_p_advance(p);
        if (cg_p_is_name(p, "forward") || cg_p_is_name(p, "backward")) {
            x->phase = cg_p_is_name(p, "forward") ? CG_PHASE_FORWARD : CG_PHASE_BACKWARD;
            cg_p_advance(p);
        } else {
            cg_error_at(&p->st, cg_p_here(p), "expected forward or backward after 'at', got %s",
                        cg_p_got(p));
            return false;
        }
    }
    if (x->raises && cg_p_tok(p)->kind != CG_TOK_STRING)
        return (x->message = cg_p_strndup(p, "", 0)) != NULL;
    if (cg_p_tok(p)->kind != CG_TOK_STRING) {
        cg_error_at(&p->st, cg_p_here(p), "expected a quoted message, got %s", cg_p_got(p));
        return false;
    }
    if (!(x->message = string_value(p, cg_p_tok(p))))
        return false;
    cg_p_advance(p);
    return !cg_p_failed(p);
}

bool cg_parse_expect(cg_parser *p)
{
    cg_expect *x = cg_p_alloc(p, sizeof *x);
    if (!x)
        return false;
    x->pos = cg_p_here(p);
    cg_p_advance(p); /* 'expect' */
    bool ok;
    if (cg_p_is_name(p, "grad") || cg_p_is_name(p, "value")) {
        ok = parse_tensor_expect(p, x);
    } else if (cg_p_is_name(p, "error") || cg_p_is_name(p, "raises")) {
        ok = parse_error_expect(p, x);
    } else {
        cg_error_at(&p->st, cg_p_here(p),
                    "expected grad(NAME), value(NAME), error or raises, got %s", cg_p_got(p));
        ok = false;
    }
    cg_case *c = p->c;
    if (ok && cg_p_grow(p, &c->expects, c->nexpects, &p->cap_expects, sizeof *c->expects)) {
        c->expects[c->nexpects++] = x;
        return true;
    }
    cg_expect_free(x);
    return false;
}

/* ---- checks at the end of the file -------------------------------------- */

static bool is_world(const cg_case *c, int n)
{
    for (int i = 0; i < c->nworlds; i++)
        if (c->worlds[i] == n)
            return true;
    return false;
}

static void list_count_mismatch(cg_parser *p, const cg_check *k)
{
    char counts[256], worlds[256];
    const cg_case *c = p->c;
    cg_format_worlds(c, " or ", counts, sizeof counts);
    cg_format_worlds(c, ", ", worlds, sizeof worlds);
    bool one = c->nworlds == 1 && c->worlds[0] == 1;
    cg_error_at(&p->st, cg_p_pos(p, k->line, k->col),
                "expected %s value list%s (one per rank) for world%s %s, got %d", counts,
                one ? "" : "s", c->nworlds == 1 ? "" : "s", worlds, k->value);
}

static bool run_check(cg_parser *p, const cg_check *k)
{
    const cg_case *c = p->c;
    int largest = c->worlds[c->nworlds - 1];
    switch (k->kind) {
    case CG_CHECK_NAME:
        if (!cg_p_is_defined(p, k->name, strlen(k->name)))
            cg_error_at(&p->st, cg_p_pos(p, k->line, k->col),
                        "expected a defined tensor name, got '%s'", k->name);
        break;
    case CG_CHECK_RANK:
        if (k->value >= largest)
            cg_error_at(&p->st, cg_p_pos(p, k->line, k->col),
                        "expected a rank below %d (the largest world), got %d", largest, k->value);
        break;
    case CG_CHECK_LISTS:
        if (!is_world(c, k->value))
            list_count_mismatch(p, k);
        break;
    }
    return !cg_p_failed(p);
}

bool cg_run_checks(cg_parser *p)
{
    if (!p->c->name) {
        cg_error_at(&p->st, cg_p_pos(p, 1, 1), "expected 'case NAME', got end of file");
        return false;
    }
    if (p->c->nworlds == 0) {
        cg_error_at(&p->st, cg_p_pos(p, 1, 1),
                    "expected 'world N' or 'worlds ...', got end of file");
        return false;
    }
    for (int i = 0; i < p->nchecks; i++)
        if (!run_check(p, &p->checks[i]))
            return false;
    return true;
}
