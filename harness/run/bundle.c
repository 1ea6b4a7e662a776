/* bundle.c — see bundle.h. */
#include "bundle.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char magic[] = "collgrad-bundle 1\n";

int cg_bundle_write(FILE *f, const cg_case_set *set, const cg_job *jobs, int njobs, cg_status *st)
{
    int bad = fputs(magic, f) == EOF || fprintf(f, "cases %d\n", set->n) < 0;
    for (int i = 0; i < set->n && !bad; i++) {
        const cg_case *c = set->cases[i];
        if (!c->text) {
            cg_error_infra(st, "%s: the case's text was not kept, so the ranks cannot get it",
                           c->file);
            return -1;
        }
        size_t plen = strlen(c->file);
        bad = fprintf(f, "case %zu %zu\n", plen, c->text_len) < 0 ||
              fwrite(c->file, 1, plen, f) != plen ||
              fwrite(c->text, 1, c->text_len, f) != c->text_len || fputc('\n', f) == EOF;
    }
    bad |= fprintf(f, "jobs %d\n", njobs) < 0;
    for (int i = 0; i < njobs && !bad; i++)
        bad = fprintf(f, "job %d %d %s\n", jobs[i].case_index, jobs[i].expect_only, jobs[i].rules) <
              0;
    if (bad)
        cg_error_infra(st, "cannot write the job bundle");
    return bad ? -1 : 0;
}

/* A cursor over untrusted bytes; every step checks what is left. */
typedef struct cursor {
    const char *start, *p, *end;
    cg_status *st;
} cursor;

static int expected(cursor *c, const char *what)
{
    size_t left = (size_t)(c->end - c->p), show = left < 24 ? left : 24;
    char got[64];
    size_t k = 0;
    for (size_t i = 0; i < show; i++) /* printable, one line: the bytes may be anything */
        got[k++] = c->p[i] >= 0x20 && c->p[i] < 0x7f ? c->p[i] : '.';
    got[k] = '\0';
    cg_error(c->st, "bundle: expected %s at byte %td, got %s%s%s", what, c->p - c->start,
             left ? "'" : "the end", got, left ? "'" : "");
    return -1;
}

/* The line from the cursor to its '\n' (excluded), copied into buf. */
static int take_line(cursor *c, char *buf, size_t len, const char *what)
{
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    if (!nl || (size_t)(nl - c->p) >= len)
        return expected(c, what);
    memcpy(buf, c->p, (size_t)(nl - c->p));
    buf[nl - c->p] = '\0';
    c->p = nl + 1;
    return 0;
}

static int take_count(cursor *c, const char *word, int *n)
{
    char line[64], tail;
    const char *at = c->p;
    if (take_line(c, line, sizeof line, word) != 0)
        return -1;
    char fmt[32];
    snprintf(fmt, sizeof fmt, "%s %%d%%c", word);
    if (sscanf(line, fmt, n, &tail) != 1 || *n < 0) {
        c->p = at;
        char what[48];
        snprintf(what, sizeof what, "'%s N'", word);
        return expected(c, what);
    }
    return 0;
}

static int take_case(cursor *c, const cg_limits *lim, cg_case **out)
{
    char line[96], tail;
    size_t plen, tlen;
    const char *at = c->p;
    if (take_line(c, line, sizeof line, "'case PATHLEN TEXTLEN'") != 0)
        return -1;
    size_t left = (size_t)(c->end - c->p);
    if (sscanf(line, "case %zu %zu%c", &plen, &tlen, &tail) != 2 || plen == 0 || plen > PATH_MAX ||
        tlen > left || plen > left - tlen || left - tlen - plen < 1 || c->p[plen + tlen] != '\n') {
        c->p = at;
        return expected(c, "'case PATHLEN TEXTLEN' whose path and text are there");
    }
    if (memchr(c->p, '\0', plen))
        return expected(c, "a path without NUL bytes");
    char *path = malloc(plen + 1); /* not strndup: the bytes after the path need not hold a NUL */
    if (!path)
        return cg_error_infra(c->st, "out of memory");
    memcpy(path, c->p, plen);
    path[plen] = '\0';
    *out = cg_parse_case(path, c->p + plen, tlen, c->st);
    free(path);
    if (!*out)
        return -1; /* the parser's own "file:line:col: expected ..." */
    (*out)->limits = cg_limits_or_default(lim);
    c->p += plen + tlen + 1;
    return 0;
}

static int take_job(cursor *c, int ncases, cg_job *j)
{
    char line[sizeof j->rules + 64];
    int at = 0, only;
    const char *start = c->p;
    if (take_line(c, line, sizeof line, "'job CASE EXPECT_ONLY RULES'") != 0)
        return -1;
    if (sscanf(line, "job %d %d %n", &j->case_index, &only, &at) != 2 || at == 0 ||
        j->case_index < 0 || j->case_index >= ncases || (only != 0 && only != 1) || !line[at] ||
        strlen(line + at) >= sizeof j->rules) {
        c->p = start;
        return expected(c, "'job CASE EXPECT_ONLY RULES' naming a case of the bundle");
    }
    j->expect_only = only;
    snprintf(j->rules, sizeof j->rules, "%s", line + at);
    return 0;
}

int cg_bundle_parse(const char *buf, size_t len, const cg_limits *lim, cg_case_set *set,
                    cg_job **jobs, int *njobs, cg_status *st)
{
    cursor c = {buf, buf, buf + len, st};
    int ncases = 0, n = 0;
    memset(set, 0, sizeof *set);
    *jobs = NULL;
    *njobs = 0;
    if (len < sizeof magic - 1 || memcmp(buf, magic, sizeof magic - 1) != 0)
        return expected(&c, "'collgrad-bundle 1'");
    c.p += sizeof magic - 1;
    if (take_count(&c, "cases", &ncases) != 0)
        return -1;
    /* each case takes at least its 8-byte header: a count the bytes cannot hold is refused */
    if ((size_t)ncases > len / 8)
        return expected(&c, "as many cases as the bundle holds");
    if (!(set->cases = calloc((size_t)ncases + 1, sizeof *set->cases)))
        return cg_error_infra(st, "out of memory");
    int rc = 0;
    for (int i = 0; i < ncases && rc == 0; i++)
        if ((rc = take_case(&c, lim, &set->cases[i])) == 0)
            set->n++;
    if (rc == 0)
        rc = take_count(&c, "jobs", &n);
    if (rc == 0 && (size_t)n > len / 8)
        rc = expected(&c, "as many jobs as the bundle holds");
    if (rc == 0 && !(*jobs = calloc((size_t)n + 1, sizeof **jobs))) {
        cg_error_infra(st, "out of memory");
        rc = -1;
    }
    for (int i = 0; i < n && rc == 0; i++)
        rc = take_job(&c, set->n, &(*jobs)[i]);
    if (rc == 0 && c.p != c.end)
        rc = expected(&c, "the end after the last job");
    if (rc != 0) {
        cg_case_set_free(set);
        free(*jobs);
        *jobs = NULL;
        return -1;
    }
    *njobs = n;
    return 0;
}
