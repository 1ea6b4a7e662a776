/* junit.c — see junit.h. Built in a growing buffer, then written atomically. */
#include "junit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(sbuf *b, const char *fmt, ...)
{
    for (int tries = 0; tries < 2 && !b->oom; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->n + (size_t)n < b->cap) {
            b->n += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* XML-escape s into b (attribute-safe). */
static void add_escaped(sbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': add(b, "&amp;"); break;
        case '<': add(b, "&lt;"); break;
        case '>': add(b, "&gt;"); break;
        case '"': add(b, "&quot;"); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
                add(b, "?");
            else
                add(b, "%c", *s);
        }
    }
}

static void add_failures(sbuf *b, const cg_case_result *c)
{
    add(b, "      <failure message=\"");
    int nfail = 0;
    for (int i = 0; i < c->nchecks; i++)
        nfail += c->checks[i].status == CG_FAIL;
    add(b, "%d failing checks\">", nfail);
    for (int i = 0; i < c->nchecks; i++) {
        const cg_check *k = &c->checks[i];
        if (k->status != CG_FAIL)
            continue;
        char line[256];
        snprintf(line, sizeof line, "%s(%s) rank %d%s%s: ", k->semantics, k->tensor, k->rank,
                 k->rules ? " rules=" : "", k->rules ? k->rules : "");
        add_escaped(b, line);
        for (int64_t e = 0; e < k->numel && e < 4; e++)
            add(b, "%sexpected %.10g observed %.10g", e ? ", " : "", k->expected[e], k->observed[e]);
        add_escaped(b, k->note);
        add(b, "\n");
    }
    add(b, "</failure>\n");
}

int cg_report_write_junit(const cg_report *r, const char *path, char *err, size_t errlen)
{
    sbuf b = {0};
    double total = 0;
    for (int i = 0; i < r->ncases; i++)
        total += r->cases[i].duration_s;
    add(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    add(&b, "<testsuites>\n  <testsuite name=\"collgrad-check\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
            "skipped=\"%d\" time=\"%.3f\">\n",
        r->ncases, r->failed, r->errors, r->skipped, total);
    for (int i = 0; i < r->ncases; i++) {
        const cg_case_result *c = &r->cases[i];
        add(&b, "    <testcase classname=\"collgrad-check.W%d\" name=\"", c->world);
        add_escaped(&b, c->name);
        add(&b, "\" file=\"");
        add_escaped(&b, c->file);
        add(&b, "\" time=\"%.3f\">\n", c->duration_s);
        if (c->status == CG_FAIL)
            add_failures(&b, c);
        if (c->status == CG_ERROR) {
            add(&b, "      <error message=\"");
            add_escaped(&b, c->message ? c->message : "error");
            add(&b, "\"/>\n");
        }
        if (c->status == CG_SKIP)
            add(&b, "      <skipped/>\n");
        add(&b, "    </testcase>\n");
    }
    add(&b, "  </testsuite>\n</testsuites>\n");
    if (b.oom) {
        free(b.p);
        snprintf(err, errlen, "%s: out of memory building the JUnit report", path);
        return -1;
    }
    int rc = cg_write_file_atomic(path, b.p, err, errlen);
    free(b.p);
    return rc;
}
