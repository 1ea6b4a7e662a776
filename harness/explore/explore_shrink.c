/* explore_shrink.c — one-at-a-time reductions kept while the class holds
 * (explore_shrink.h): statements deleted, calls bypassed (a ring's two
 * halves together) and the aliases that leaves inlined, the world lowered, a
 * group's calls moved to the whole world, shapes halved, values made small
 * whole numbers. A program is a list of lines; the header (case, source, world,
 * dtype), comments and blank lines are never deleted. */
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

/* A param line with dimension d of its shape halved (rounded down, at
 * least 1), or NULL when it has no such dimension or it is 1 already. The
 * shape is what follows "randn(" or small_values' "full(K + rank, ". */
static char *halved_dim(const char *line, int d)
{
    const char *at = strstr(line, "param(randn(");
    const char *dims = at ? at + strlen("param(randn(") : NULL;
    if (!dims && (at = strstr(line, "param(full(")) && (dims = strstr(at, " + rank, ")))
        dims += strlen(" + rank, ");
    for (int k = 0; dims && k < d; k++)
        if ((dims = strchr(dims, ',')))
            dims += 2;
    char *end = NULL;
    long v = dims ? strtol(dims, &end, 10) : 0;
    if (!dims || end == dims || v < 2)
        return NULL;
    char *out = malloc(strlen(line) + 1);
    if (out)
        sprintf(out, "%.*s%ld%s", (int)(dims - line), line, v / 2, end);
    return out;
}

/* text with every ", group=NAME" gone: the calls on the whole world. */
static char *without_group(const char *text, const char *name)
{
    char key[48];
    snprintf(key, sizeof key, ", group=%s)", name);
    char *out = malloc(strlen(text) + 1), *w = out;
    for (const char *s = text; out && *s;) {
        const char *hit = strstr(s, key);
        size_t len = hit ? (size_t)(hit - s) : strlen(s);
        memcpy(w, s, len), w += len;
        s += len;
        if (hit)
            *w++ = ')', s += strlen(key);
    }
    if (out)
        *w = '\0';
    return out;
}

/* The process groups line i names ("g0 = group(...)", "tp, dp = mesh(...)"), into
 * names[2]; how many. */
static int group_names(const char *l, char names[2][16])
{
    if (sscanf(l, "%15[a-z0-9_] = group(", names[0]) == 1 && strstr(l, " = group("))
        return 1;
    if (sscanf(l, "%15[a-z0-9_], %15[a-z0-9_] = mesh(", names[0], names[1]) == 2 && strstr(l, " = mesh("))
        return 2;
    return 0;
}

/* An identifier at s: its length, or 0. */
static size_t ident(const char *s)
{
    size_t n = 0;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return 0;
    while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') ||
           s[n] == '_')
        n++;
    return n;
}

/* "V = NAME(A, ...)" with a plain name A first: "V = A", the call bypassed
 * (a shape it changes makes the candidate another class, which is dropped).
 * NULL where the line is no such call. */
static char *bypassed(const char *line)
{
    size_t v = ident(line);
    if (!v || strncmp(line + v, " = ", 3) != 0)
        return NULL;
    const char *call = line + v + 3, *open = call + ident(call);
    if (open == call || *open != '(')
        return NULL;
    size_t a = ident(open + 1);
    if (!a || (open[1 + a] != ',' && open[1 + a] != ')'))
        return NULL;
    char *out = malloc(v + 3 + a + 1);
    if (out)
        sprintf(out, "%.*s = %.*s", (int)v, line, (int)a, open + 1);
    return out;
}

/* The program with line i, "V = A" (an alias), gone and V read as A after
 * it; NULL where line i is no alias. */
static char *alias_inlined(const prog *p, int i)
{
    const char *l = p->line[i];
    size_t v = ident(l), a = v && strncmp(l + v, " = ", 3) == 0 ? ident(l + v + 3) : 0;
    if (!a || l[v + 3 + a] != '\0')
        return NULL;
    size_t len = 1;
    for (int k = 0; k < p->n; k++)
        len += (strlen(p->line[k]) + 1) * (a > v ? a / v + 1 : 1);
    char *t = malloc(len), *w = t;
    for (int k = 0; t && k < p->n; k++) {
        if (k == i)
            continue;
        for (const char *s = p->line[k]; *s;) {
            size_t n = ident(s); /* a whole name: the loop steps over names, not into them */
            if (k > i && n == v && strncmp(s, l, v) == 0)
                w += sprintf(w, "%.*s", (int)a, l + v + 3), s += n;
            else if (n)
                w += sprintf(w, "%.*s", (int)n, s), s += n;
            else
                *w++ = *s++;
        }
        *w++ = '\n';
    }
    if (t)
        *w = '\0';
    return t;
}

/* A ring's two halves bypassed: "send(A, ...)" at i and the next
 * "V = recv(...)" become "V = A". NULL where line i is no send. */
static char *ring_bypassed(const prog *p, int i)
{
    size_t a = strncmp(p->line[i], "send(", 5) == 0 ? ident(p->line[i] + 5) : 0;
    if (!a)
        return NULL;
    for (int j = i + 1; j < p->n; j++) {
        size_t v = ident(p->line[j]);
        if (v && strncmp(p->line[j] + v, " = recv(", 8) == 0) {
            char line[96];
            snprintf(line, sizeof line, "%.*s = %.*s", (int)v, p->line[j], (int)a, p->line[i] + 5);
            prog q = *p; /* the lines borrowed: only join reads them */
            return join(&q, i, 1, j, line);
        }
    }
    return NULL;
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
        /* calls bypassed (a ring's send and recv together), then aliases inlined */
        for (int i = p.n - 1; i >= 0; i--) {
            char *line = bypassed(p.line[i]);
            if (line && keep(&p, join(&p, -1, 0, i, line), cls, judge, ctx, tries))
                changed = true;
            free(line);
            if (i < p.n && keep(&p, ring_bypassed(&p, i), cls, judge, ctx, tries))
                changed = true;
        }
        for (int i = p.n - 1; i >= 0; i--)
            if (i < p.n && keep(&p, alias_inlined(&p, i), cls, judge, ctx, tries))
                changed = true;
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
        /* a group's calls on the world instead (its line goes with the statements later) */
        for (int i = 0; i < p.n; i++) {
            char names[2][16];
            for (int k = group_names(p.line[i], names) - 1; k >= 0; k--) {
                char *now = join(&p, -1, 0, -1, NULL);
                char *cand = now ? without_group(now, names[k]) : NULL;
                bool differs = cand && strcmp(cand, now) != 0;
                free(now);
                if (!differs)
                    free(cand);
                else if (keep(&p, cand, cls, judge, ctx, tries))
                    changed = true;
            }
        }
        for (int i = 0; i < p.n; i++)
            for (int d = 0; d < 2; d++) {
                char *line;
                while ((line = halved_dim(p.line[i], d)) &&
                       keep(&p, join(&p, -1, 0, i, line), cls, judge, ctx, tries))
                    changed = true, free(line);
                free(line);
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
