/* ir.c — the parsed case: the table of built-in functions, destructors,
 * loading a file, and printing a case back as case-language text. */
#include "parse_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- built-in functions -------------------------------------------------- */

#define FN(name, lo, hi) {name, lo, hi, {NULL, NULL}, -1, false}
#define STMT(name, n) {name, n, n, {NULL, NULL}, -1, true}

/* Arity counts positional and keyword arguments together. kw_first is the
 * positional slot the first keyword also occupies (sum(x, 0) is
 * sum(x, axis=0)); cat's axis is keyword-only since its tensors are variadic. */
static const cg_function functions[] = {
#define CG_OP_TABLE_FN(id, name, lo, hi, kw, kwpos, cls, shape, dom, diff, entry)                   \
    {name, lo, hi, {kw, NULL, NULL}, kwpos, false},
    CG_OP_TABLE(CG_OP_TABLE_FN) /* op_table.h: every tensor function */
#undef CG_OP_TABLE_FN
    FN("group", 1, 1), /* process groups (interp.h) */
    FN("mesh", 1, 1),
    FN("group_rank", 1, 1),
    FN("group_size", 1, 1),
    STMT("backward", 1),
    STMT("zero_grad", 0),
#define CG_COLL_WORD_FN(kind, name, lo, hi, kw1, kw2, kw3, first, stmt)                            \
    {name, lo, hi, {kw1, kw2, kw3}, first, stmt},
    CG_COLLECTIVE_WORDS(CG_COLL_WORD_FN) /* coll_words.h: every collective, send and recv */
#undef CG_COLL_WORD_FN
};

const cg_function *cg_find_function(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
        if (strlen(functions[i].name) == len && memcmp(functions[i].name, name, len) == 0)
            return &functions[i];
    return NULL;
}

bool cg_is_known_function(const char *name)
{
    return name && cg_find_function(name, strlen(name)) != NULL;
}

bool cg_rules_name_covers(const char *want, const char *name)
{
    if (!want || !name)
        return false;
    size_t n = strlen(want);
    return strcmp(want, name) == 0 ||
           (!strchr(want, '@') && strncmp(want, name, n) == 0 && name[n] == '@');
}

const char *cg_semantics_name(cg_semantics s)
{
    switch (s) {
    case CG_SEM_PER_RANK: return "per_rank";
    case CG_SEM_REPLICATED: return "replicated";
    case CG_SEM_OWN_LOSS: return "own_loss";
    }
    return "?";
}

/* ---- destructors --------------------------------------------------------- */

void cg_expr_free(cg_expr *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->nargs; i++) {
        cg_expr_free(e->args[i]);
        if (e->kwnames)
            free(e->kwnames[i]);
    }
    free(e->args);
    free(e->kwnames);
    free(e->name);
    free(e);
}

void cg_stmt_free(cg_stmt *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nnames; i++)
        free(s->names[i]);
    for (int i = 0; i < s->nranks; i++)
        cg_expr_free(s->ranks[i]);
    for (int i = 0; i < s->nbody; i++)
        cg_stmt_free(s->body[i]);
    free(s->names);
    free(s->ranks);
    free(s->body);
    cg_expr_free(s->expr);
    free(s);
}

void cg_expect_free(cg_expect *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->nlists; i++)
        free(x->lists[i]);
    free(x->lists);
    free(x->list_len);
    free(x->ranks);
    free(x->tensor);
    free(x->rules);
    free(x->message);
    cg_expr_free(x->expr);
    free(x);
}

void cg_case_free(cg_case *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nstmts; i++)
        cg_stmt_free(c->stmts[i]);
    for (int i = 0; i < c->nexpects; i++)
        cg_expect_free(c->expects[i]);
    free(c->stmts);
    free(c->expects);
    free(c->name);
    free(c->file);
    free(c->source);
    free(c->text);
    free(c);
}

/* ---- loading ------------------------------------------------------------- */

static cg_case *cannot_read(const char *path, int errnum, cg_status *st)
{
    (errnum == ENOMEM ? cg_error_infra : cg_error)(st, "%s: cannot read: %s", path, strerror(errnum));
    return NULL;
}

/* What a file that is not a case file is, for the message. */
const char *cg_file_type_name(mode_t mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket"
         : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
         : S_ISLNK(mode) ? "a symbolic link" : S_ISREG(mode) ? "a regular file" : "not a regular file";
}

static cg_case *too_big(const char *path, size_t max_bytes, cg_status *st)
{
    cg_error(st, "%s: expected a case file of at most %zu bytes (the limit; raise it with --max-case-bytes), "
             "got more", path, max_bytes);
    return NULL;
}

/* At most max_bytes + 1 bytes of fd into *buf (not NUL-terminated): one more
 * than the limit tells a file that grew past it since fstat. 0 or an errno. */
static int read_bounded(int fd, size_t max_bytes, size_t size_hint, char **buf, size_t *len)
{
    size_t cap = (size_hint < max_bytes ? size_hint : max_bytes) + 1;
    *len = 0;
    if (!(*buf = malloc(cap)))
        return ENOMEM;
    while (*len <= max_bytes) {
        if (*len == cap) {
            size_t want = cap > max_bytes / 2 ? max_bytes + 1 : 2 * cap;
            char *grown = realloc(*buf, want);
            if (!grown)
                return ENOMEM;
            *buf = grown;
            cap = want;
        }
        ssize_t n = read(fd, *buf + *len, cap - *len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            break;
        *len += (size_t)n;
    }
    return 0;
}

/* Opened without following into a FIFO's wait (O_NONBLOCK) and refused
 * unless it is a regular file: a case path is untrusted, and a FIFO, a
 * device or /dev/zero would block or never end. The size is checked twice:
 * by fstat before anything is allocated, and by the bounded read. */
cg_limits cg_limits_or_default(const cg_limits *lim)
{
    cg_limits l = lim ? *lim : (cg_limits){0};
    if (!l.case_bytes)
        l.case_bytes = CG_DEFAULT_MAX_CASE_BYTES;
    if (!l.value_elements)
        l.value_elements = CG_DEFAULT_MAX_ELEMENTS;
    if (!l.case_elements)
        l.case_elements = CG_DEFAULT_MAX_CASE_ELEMENTS;
    return l;
}

cg_case *cg_load_case(const char *path, const cg_limits *lim, cg_status *st)
{
    cg_limits limits = cg_limits_or_default(lim);
    size_t max_bytes = limits.case_bytes;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return cannot_read(path, errno, st);
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return cannot_read(path, e, st);
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        cg_error(st, "%s: expected a case file, got %s", path, cg_file_type_name(sb.st_mode));
        return NULL;
    }
    if ((unsigned long long)sb.st_size > max_bytes) {
        close(fd);
        return too_big(path, max_bytes, st);
    }
    char *buf = NULL;
    size_t len;
    int rc = read_bounded(fd, max_bytes, (size_t)sb.st_size, &buf, &len);
    if (close(fd) != 0 && rc == 0)
        rc = errno;
    if (rc != 0) {
        free(buf);
        return cannot_read(path, rc, st);
    }
    if (len > max_bytes) {
        free(buf);
        return too_big(path, max_bytes, st);
    }
    cg_case *c = cg_parse_case(path, buf, len, st);
    if (!c) {
        free(buf);
        return NULL;
    }
    c->limits = limits;
    c->text = buf; /* kept: a launcher hands the ranks these very bytes (bundle.h) */
    c->text_len = len;
    return c;
}

/* ---- printing ------------------------------------------------------------ */

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

cg_phase cg_error_phase(const char *error)
{
    return error && (strstr(error, "backward of ") || strstr(error, " at backward")) ? CG_PHASE_BACKWARD
                                                                                     : CG_PHASE_FORWARD;
}

const char *cg_phase_name(cg_phase p)
{
    return p == CG_PHASE_FORWARD ? "forward" : p == CG_PHASE_BACKWARD ? "backward" : "any";
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
