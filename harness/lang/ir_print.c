/* ir_print.c — a parsed case printed back as case-language text (explain's
 * listing; test_parser and fuzz_parser check that the text parses back to a
 * case that prints the same), and the world list as a sentence for messages. */
#include "parse_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cg_format_worlds(const cg_case *c, const char *last_sep, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->nworlds;) {
        int j = i;
        while (j + 1 < c->nworlds && c->worlds[j + 1] == c->worlds[j] + 1)
            j++;
        if (j - i < 2) /* runs of three or more read better as a range */
            j = i;
        const char *sep = i == 0 ? "" : j + 1 == c->nworlds ? last_sep : ", ";
        int w = j > i ? snprintf(buf + used, n - used, "%s%d..%d", sep, c->worlds[i], c->worlds[j])
                      : snprintf(buf + used, n - used, "%s%d", sep, c->worlds[i]);
        if (w < 0 || (size_t)w >= n - used)
            return;
        used += (size_t)w;
        i = j + 1;
    }
}

/* The shortest %g form that reads back as the same double ("30", not
 * "3e+01"). */
static void print_number(FILE *f, double v)
{
    char best[40] = "", buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        bool exact = strtod(buf, NULL) == v || !isfinite(v);
        if (exact && (!best[0] || strlen(buf) < strlen(best)))
            memcpy(best, buf, sizeof buf);
    }
    fputs(best, f);
}

/* Binding strength, higher binds tighter; matches the grammar in parser.c. */
static int precedence(const cg_expr *e)
{
    switch (e->kind) {
    case CG_E_TERNARY: return 1;
    case CG_E_UNARY: return 7;
    case CG_E_INDEX: return 9;
    case CG_E_NUM: return e->num < 0 ? 7 : 10;
    case CG_E_BINARY: break;
    default: return 10;
    }
    switch (e->op) {
    case CG_OP_OR: return 2;
    case CG_OP_AND: return 3;
    case CG_OP_EQ: case CG_OP_NE: case CG_OP_LT: case CG_OP_LE: case CG_OP_GT: case CG_OP_GE: return 4;
    case CG_OP_ADD: case CG_OP_SUB: return 5;
    case CG_OP_POW: return 8;
    default: return 6;
    }
}

static const char *op_text(cg_opcode op)
{
    static const char *const texts[] = {"?", "+", "-", "*", "/", "**", "@", "==", "!=", "<",
                                        "<=", ">", ">=", "&&", "||", "%", "-", "!"};
    return (unsigned)op < sizeof texts / sizeof texts[0] ? texts[op] : "?";
}

static void print_expr(FILE *f, const cg_expr *e, int min_prec);

static void print_args(FILE *f, const cg_expr *e, int first)
{
    for (int i = first; i < e->nargs; i++) {
        fputs(i > first ? ", " : "", f);
        if (e->kwnames && e->kwnames[i])
            fprintf(f, "%s=", e->kwnames[i]);
        print_expr(f, e->args[i], 1);
    }
}

static void print_operator(FILE *f, const cg_expr *e, int prec)
{
    if (e->kind == CG_E_UNARY) {
        fputs(op_text(e->op), f);
        print_expr(f, e->args[0], 7);
        return;
    }
    bool pow = e->op == CG_OP_POW, cmp = prec == 4;
    print_expr(f, e->args[0], pow ? 9 : cmp ? prec + 1 : prec);
    fprintf(f, pow ? "%s" : " %s ", op_text(e->op));
    print_expr(f, e->args[1], pow ? 7 : prec + 1);
}

static void print_expr(FILE *f, const cg_expr *e, int min_prec)
{
    if (!e)
        return;
    int prec = precedence(e);
    fputs(prec < min_prec ? "(" : "", f);
    switch (e->kind) {
    case CG_E_NUM: print_number(f, e->num); break;
    case CG_E_RANK: fputs("rank", f); break;
    case CG_E_WORLD: fputs("world", f); break;
    case CG_E_NAME: case CG_E_WORD: fputs(e->name, f); break;
    case CG_E_LIST: fputc('[', f); print_args(f, e, 0); fputc(']', f); break;
    case CG_E_CALL: fprintf(f, "%s(", e->name); print_args(f, e, 0); fputc(')', f); break;
    case CG_E_UNARY: case CG_E_BINARY: print_operator(f, e, prec); break;
    case CG_E_TERNARY:
        print_expr(f, e->args[0], 2);
        fputs(" ? ", f);
        print_expr(f, e->args[1], 2); /* a nested ?: reads better in parentheses here */
        fputs(" : ", f);
        print_expr(f, e->args[2], 1);
        break;
    case CG_E_INDEX:
        print_expr(f, e->args[0], 9);
        fputc('[', f);
        print_expr(f, e->nargs > 1 ? e->args[1] : NULL, 1);
        fputs(e->is_slice ? ":" : "", f);
        print_expr(f, e->is_slice && e->nargs > 2 ? e->args[2] : NULL, 1);
        fputc(']', f);
        break;
    }
    fputs(prec < min_prec ? ")" : "", f);
}

static void print_stmt(FILE *f, const cg_stmt *s, const char *indent)
{
    fputs(indent, f);
    switch (s->kind) {
    case CG_S_ASSIGN:
        for (int i = 0; i < s->nnames; i++)
            fprintf(f, "%s%s", i ? ", " : "", s->names[i]);
        fputs(" = ", f);
        print_expr(f, s->expr, 1);
        break;
    case CG_S_CALL: print_expr(f, s->expr, 1); break;
    case CG_S_ON:
        fputs("on ", f);
        for (int i = 0; i < s->nranks; i++) {
            fputs(i ? ", " : "", f);
            print_expr(f, s->ranks[i], 1);
        }
        fputs(" {\n", f);
        for (int i = 0; i < s->nbody; i++)
            print_stmt(f, s->body[i], "  ");
        fputc('}', f);
        break;
    }
    fputc('\n', f);
}

static void print_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void print_values(FILE *f, const cg_expect *x)
{
    if (x->undefined)
        fputs(" undefined", f);
    for (int i = 0; i < x->nlists; i++) {
        fputs(" [", f);
        for (int j = 0; j < x->list_len[i]; j++) {
            fputs(j ? ", " : "", f);
            print_number(f, x->lists[i][j]);
        }
        fputc(']', f);
    }
    if (x->expr) {
        fputs(" = ", f);
        print_expr(f, x->expr, 1);
    }
}

static void print_expect(FILE *f, const cg_expect *x)
{
    if (x->kind == CG_X_ERROR) {
        fputs(x->raises ? "expect raises" : "expect error", f);
        if (x->rules)
            fprintf(f, " rules=%s", x->rules);
        if (x->phase != CG_PHASE_ANY)
            fprintf(f, " at %s", cg_phase_name(x->phase));
        if (!x->raises || x->message[0]) {
            fputc(' ', f);
            print_quoted(f, x->message);
        }
        fputc('\n', f);
        return;
    }
    fprintf(f, "expect %s(%s)", x->kind == CG_X_GRAD ? "grad" : "value", x->tensor);
    for (int i = 0; i < x->nranks; i++)
        fprintf(f, "%s%d", i ? ", " : " on ", x->ranks[i]);
    if (x->kind == CG_X_GRAD)
        fprintf(f, " %s", cg_semantics_name(x->semantics));
    if (x->rules)
        fprintf(f, " rules=%s", x->rules);
    print_values(f, x);
    fputc('\n', f);
}

static void print_header(FILE *f, const cg_case *c)
{
    char worlds[256];
    cg_format_worlds(c, ", ", worlds, sizeof worlds);
    fprintf(f, "case %s\n", c->name ? c->name : "unnamed");
    if (c->source)
        fprintf(f, "source %s\n", c->source);
    fprintf(f, "%s %s\n", c->nworlds == 1 ? "world" : "worlds", worlds);
    fprintf(f, "dtype %s\n", cg_dtype_name(c->dtype));
    if (c->rtol != 0 || c->atol != 0) {
        fputs("tolerance rtol=", f);
        print_number(f, c->rtol);
        fputs(" atol=", f);
        print_number(f, c->atol);
        fputc('\n', f);
    }
    if (c->has_seed)
        fprintf(f, "seed %llu\n", c->seed);
    if (cg_jax_spelling_set(&c->jax)) {
        fputs("jax", f);
        const char *key, *word;
        for (int k = 0; (word = cg_jax_spelling_word(&c->jax, k, &key)); k++)
            fprintf(f, " %s=%s", key, word);
        fputc('\n', f);
    }
}

void cg_case_print(FILE *f, const cg_case *c)
{
    print_header(f, c);
    if (c->nstmts)
        fputc('\n', f);
    for (int i = 0; i < c->nstmts; i++)
        print_stmt(f, c->stmts[i], "");
    if (c->nexpects)
        fputc('\n', f);
    for (int i = 0; i < c->nexpects; i++)
        print_expect(f, c->expects[i]);
}
