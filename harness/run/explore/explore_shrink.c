/* explore_shrink.c — one-at-a-time reductions kept while the class holds
 * (explore_shrink.h). A program is a list of lines; the header (case,
 * source, world, dtype), comments and blank lines are never deleted. */
#include "explore_shrink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LINES = 256 };

typedef struct prog {
    char *line[MAX_LINES];
    int n;
} prog;

static bool is_header(const char *l)
{
    static const char *const words[] = {"case ", "source ", "world ", "dtype ", "expect ", "#", "seed ",
                                        "tolerance "};
    if (!l[0])
        return true;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strncmp(l, words[i], strlen(words[i])) == 0)
            return true;
    return false;
}

static void prog_free(prog *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->line[i]);
    p->n = 0;
}

static int split(const char *text, prog *p)
{
    p->n = 0;
    for (const char *s = text; *s && p->n < MAX_LINES;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (!(p->line[p->n] = strndup(s, len))) {
            prog_free(p);
            return -1;
        }
        p->n++;
        s += len + (e != NULL);
    }
    return 0;
}

/* The lines but skip..skip+nskip-1, `replace` at `at` (NULL: none), joined. */
static char *join(const prog *p, int skip, int nskip, int at, const char *replace)
{
    size_t len = 1;
    for (int i = 0; i < p->n; i++)
        len += strlen(i == at && replace ? replace : p->line[i]) + 1;
    char *t = malloc(len), *w = t;
    for (int i = 0; t && i < p->n; i++)
        if (i < skip || i >= skip + nskip)
            w += sprintf(w, "%s\n", i == at && replace ? replace : p->line[i]);
    if (t)
        *w = '\0';
    return t;
}

int cg_explore_statements(const char *text)
{
    prog p;
    if (split(text, &p) != 0)
        return -1;
    int n = 0;
    for (int i = 0; i < p.n; i++)
        n += !is_header(p.line[i]);
    prog_free(&p);
    return n;
}

/* Whether cand keeps the class; then *p becomes it. */
static bool keep(prog *p, char *cand, const char *cls, cg_shrink_judge judge, void *ctx, int *tries)
{
    char got[CG_CLASS_LEN];
    if (!cand)
        return false;
    judge(cand, got, ctx);
    ++*tries;
    prog q;
    bool same = strcmp(got, cls) == 0 && split(cand, &q) == 0;
    if (same) {
        prog_free(p);
        *p = q;
    }
    free(cand);
    return same;
}

/* "x0 = param(randn(2, 3))" with small whole numbers instead: "param(arange(6) ...)"
 * would change the shape, so full(k, dims) keeps it; k differs per line. */
static char *small_values(const char *line, int k)
{
    const char *at = strstr(line, "param(randn(");
    if (!at)
        return NULL;
    const char *dims = at + strlen("param(randn(");
    char *out = malloc(strlen(line) + 32);
    if (out)
        sprintf(out, "%.*sparam(full(%d + rank, %s", (int)(at - line), line, k + 1, dims);
    return out;
}

char *cg_explore_shrink(const char *text, const char *cls, cg_shrink_judge judge, void *ctx, int *statements,
                        int *tries)
{
    prog p;
    *tries = 0;
    if (split(text, &p) != 0)
        return NULL;
    for (bool changed = true; changed;) {
        changed = false;
        /* runs of 3, 2, then 1 statement lines (a send and its recv, an on-block
         * go together), the last first: fewer names depend on them */
        for (int size = 3; size >= 1; size--)
            for (int i = p.n - size; i >= 0; i--) {
                bool whole = i + size <= p.n;
                for (int k = i; whole && k < i + size; k++)
                    whole = !is_header(p.line[k]);
                if (whole && keep(&p, join(&p, i, size, -1, NULL), cls, judge, ctx, tries))
                    changed = true;
            }
        for (int i = 0; i < p.n; i++) {
            int w;
            if (sscanf(p.line[i], "world %d", &w) != 1)
                continue;
            for (int lower = 1; lower < w; lower++) {
                char line[32];
                snprintf(line, sizeof line, "world %d", lower);
                if (keep(&p, join(&p, -1, 0, i, line), cls, judge, ctx, tries)) {
                    changed = true;
                    break;
                }
            }
        }
        for (int i = 0, k = 0; i < p.n; i++) {
            char *line = small_values(p.line[i], k);
            if (line && keep(&p, join(&p, -1, 0, i, line), cls, judge, ctx, tries))
                changed = true, k++;
            free(line);
        }
    }
    char *out = join(&p, -1, 0, -1, NULL);
    *statements = out ? cg_explore_statements(out) : 0;
    prog_free(&p);
    return out;
}
