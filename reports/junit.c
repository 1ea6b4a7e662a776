/* junit.c — see junit.h. Built in a growing buffer, then written whole. */
#include "junit.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report_file.h"
#include "utf8.h"

/* A growing string. On OOM it stops growing and remembers (oom), so the
 * builder checks once at the end. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
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
            b->oom = true;
            return;
        }
        if (b->p && b->n + (size_t)n < b->cap) {
            b->n += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* s as XML character data or an attribute value (in_attr: line breaks and
 * tabs as references, which attribute normalisation would turn into spaces).
 * Invalid UTF-8 and characters XML 1.0 forbids become "\xNN" / "\uFFFE". */
static void add_xml(sbuf *b, const char *s, bool in_attr)
{
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)u);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int len = cg_utf8_decode(u + i, n - i, &cp);
        if (len == 0) {
            add(b, "\\x%02X", u[i++]);
            continue;
        }
        i += (size_t)len;
        if (cg_utf8_xml_forbidden(cp))
            add(b, cp < 0x80 ? "\\x%02X" : "\\u%04X", (unsigned)cp);
        else if (cp == '&')
            add(b, "&amp;");
        else if (cp == '<')
            add(b, "&lt;");
        else if (cp == '>')
            add(b, "&gt;");
        else if (cp == '"')
            add(b, "&quot;");
        else if (cp == '\r' || (in_attr && (cp == '\n' || cp == '\t')))
            add(b, "&#%u;", (unsigned)cp);
        else
            add(b, "%.*s", len, (const char *)u + i - len);
    }
}

/* The shortest text that reads back as v (like the JSON report's numbers). */
static void fmt_value(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%.15g", v);
    if (isfinite(v) && strtod(buf, NULL) != v)
        snprintf(buf, len, "%.17g", v);
}

/* "per_rank(x) rank 0 rules=torch-nn: element [0] of 1: expected 30, observed 12"
 * or "...: <note>": one failing check, into the buffer as plain text. */
static void describe_check(const cg_check *k, char *buf, size_t len)
{
    int n = k->tensor && k->tensor[0] ? snprintf(buf, len, "%s(%s)", k->semantics, k->tensor)
                                      : snprintf(buf, len, "%s", k->semantics);
    if (k->rank >= 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " rank %d", k->rank);
    if (k->rules && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " rules=%s", k->rules);
    if (n < 0 || (size_t)n >= len)
        return;
    if (k->first_bad >= 0 && k->first_bad < k->numel && k->expected && k->observed) {
        char e[32], o[32];
        fmt_value(k->expected[k->first_bad], e, sizeof e);
        fmt_value(k->observed[k->first_bad], o, sizeof o);
        n += snprintf(buf + n, len - (size_t)n, ": element [%lld] of %lld: expected %s, observed %s",
                      (long long)k->first_bad, (long long)k->numel, e, o);
    }
    if (k->note && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "%s%s", k->first_bad >= 0 ? "; " : ": ", k->note);
}

static bool is_bad(const cg_check *k) { return k->status == CG_FAIL || k->status == CG_ERROR; }

/* <failure>: the message says the first failing check and the diagnosis, the
 * text every failing check and the whole diagnosis. */
static void add_failure(sbuf *b, const cg_case_result *c)
{
    int nbad = 0;
    const cg_check *first = NULL;
    for (int i = 0; i < c->nchecks; i++)
        if (is_bad(&c->checks[i])) {
            nbad++;
            first = first ? first : &c->checks[i];
        }
    char what[1024] = "failed";
    if (first)
        describe_check(first, what, sizeof what);
    add(b, "      <failure type=\"gradient mismatch\" message=\"");
    if (nbad > 1)
        add(b, "%d failing checks; first: ", nbad);
    add_xml(b, what, true);
    if (c->diag_explanation) {
        add(b, "; diagnosis: ");
        add_xml(b, c->diag_explanation, true);
    }
    add(b, "\">");
    for (int i = 0; i < c->nchecks; i++) {
        if (!is_bad(&c->checks[i]))
            continue;
        describe_check(&c->checks[i], what, sizeof what);
        add(b, "%s ", cg_outcome_name(c->checks[i].status));
        add_xml(b, what, false);
        add(b, "\n");
    }
    if (c->diag_explanation) {
        add(b, "diagnosis: ");
        add_xml(b, c->diag_explanation, false);
        for (int i = 0; i < c->ndiag; i++) {
            add(b, i ? ", " : "\n  matches: ");
            add_xml(b, c->diag_matches[i], false);
        }
        if (c->diag_see) {
            add(b, "\n  see: ");
            add_xml(b, c->diag_see, false);
        }
        add(b, "\n");
    }
    add(b, "</failure>\n");
}

static void add_system_out(sbuf *b, const cg_case_result *c)
{
    if (!c->file && !c->source && !c->nwarnings)
        return;
    add(b, "      <system-out>");
    if (c->file) {
        add(b, "file: ");
        add_xml(b, c->file, false);
        add(b, "\n");
    }
    if (c->source) {
        add(b, "source: ");
        add_xml(b, c->source, false);
        add(b, "\n");
    }
    for (int i = 0; i < c->nwarnings; i++) {
        add(b, "warning: ");
        add_xml(b, c->warnings[i], false);
        add(b, "\n");
    }
    add(b, "</system-out>\n");
}

/* s with every character outside [A-Za-z0-9_-] replaced by '_' (at most
 * len - 1 of them), or dflt when s is NULL. */
static void id_part(const char *s, const char *dflt, char *buf, size_t len)
{
    snprintf(buf, len, "%s", s ? s : dflt);
    for (char *p = buf; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'))
            *p = '_';
}

/* The classname of case i (junit.h). */
static void classname_of(const cg_report *r, const cg_case_result *c, char *buf, size_t len)
{
    bool oracle = r->mode && strcmp(r->mode, "oracle-only") == 0;
    char tp[128], rules[128];
    id_part(oracle ? NULL : r->transport, "oracle", tp, sizeof tp);
    id_part(oracle ? NULL : c->rules ? c->rules : r->rules, "oracle", rules, sizeof rules);
    snprintf(buf, len, "collgrad-check.%s.%s.W%d", tp, rules, c->world);
}

static bool same_id(const cg_report *r, int i, int j)
{
    char a[320], b[320];
    classname_of(r, &r->cases[i], a, sizeof a);
    classname_of(r, &r->cases[j], b, sizeof b);
    const char *na = r->cases[i].name ? r->cases[i].name : "", *nb = r->cases[j].name ? r->cases[j].name : "";
    return strcmp(a, b) == 0 && strcmp(na, nb) == 0;
}

static void add_testcase(sbuf *b, const cg_report *r, int i)
{
    const cg_case_result *c = &r->cases[i];
    char cls[320];
    classname_of(r, c, cls, sizeof cls);
    int dup = 1; /* the n-th job with this id so far */
    for (int j = 0; j < i; j++)
        dup += same_id(r, i, j);
    add(b, "    <testcase classname=\"");
    add_xml(b, cls, true);
    add(b, "\" name=\"");
    add_xml(b, c->name, true);
    if (dup > 1)
        add(b, " #%d", dup);
    add(b, "\" time=\"%.3f\">\n", c->duration_s);
    if (c->status == CG_FAIL)
        add_failure(b, c);
    if (c->status == CG_ERROR) {
        add(b, "      <error type=\"%s\" message=\"", c->error_class == CG_EXIT_USAGE ? "bad case" : "infrastructure");
        add_xml(b, c->message ? c->message : "error", true);
        add(b, "\"/>\n");
    }
    if (c->status == CG_SKIP) {
        add(b, "      <skipped message=\"");
        add_xml(b, c->message ? c->message : "skipped", true);
        add(b, "\"/>\n");
    }
    add_system_out(b, c);
    add(b, "    </testcase>\n");
}

static void add_property(sbuf *b, const char *name, const char *value)
{
    add(b, "      <property name=\"%s\" value=\"", name);
    add_xml(b, value ? value : "none", true);
    add(b, "\"/>\n");
}

int cg_report_write_junit(const cg_report *r, const char *path, cg_status *st)
{
    sbuf b = {0};
    double total = 0;
    int count[4] = {0}; /* by status, from the cases themselves */
    for (int i = 0; i < r->ncases; i++) {
        total += r->cases[i].duration_s;
        count[r->cases[i].status & 3]++;
    }
    char host[256] = "unknown", when[32] = "";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    add(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    add(&b, "<testsuites name=\"collgrad-check\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n",
        r->ncases, count[CG_FAIL], count[CG_ERROR], total);
    add(&b, "  <testsuite name=\"collgrad-check\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
            "time=\"%.3f\" timestamp=\"%s\" hostname=\"",
        r->ncases, count[CG_FAIL], count[CG_ERROR], count[CG_SKIP], total, when);
    add_xml(&b, host, true);
    add(&b, "\">\n    <properties>\n");
    add_property(&b, "mode", r->mode);
    add_property(&b, "transport", r->transport);
    add_property(&b, "rules", r->rules);
    add_property(&b, "device", r->device);
    add_property(&b, "version", CG_VERSION);
    add(&b, "    </properties>\n");
    for (int i = 0; i < r->ncases; i++)
        add_testcase(&b, r, i);
    add(&b, "  </testsuite>\n</testsuites>\n");
    if (b.oom) {
        free(b.p);
        cg_error_infra(st, "%s: out of memory building the JUnit report", path);
        return -1;
    }
    int rc = cg_report_output_write(path, b.p, st);
    free(b.p);
    return rc;
}
