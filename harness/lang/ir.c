/* ir.c — the parsed case: the table of built-in functions, destructors,
 * loading a file, phase names. Printing a case back as case-language text
 * is ir_print.c. */
#include "parse_internal.h"

#include <errno.h>
#include <fcntl.h>
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

/* ---- phases ---------------------------------------------------------------- */

cg_phase cg_error_phase(const char *error)
{
    return error && (strstr(error, "backward of ") || strstr(error, " at backward")) ? CG_PHASE_BACKWARD
                                                                                     : CG_PHASE_FORWARD;
}

const char *cg_phase_name(cg_phase p)
{
    return p == CG_PHASE_FORWARD ? "forward" : p == CG_PHASE_BACKWARD ? "backward" : "any";
}
