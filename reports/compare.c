/* compare.c — see compare.h. Works on the cJSON trees directly: a report may
 * come from another version of the tool, so nothing is rebuilt into results
 * that would need every field. */
#include "compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "result.h"
#include "report_json.h"

typedef struct tally {
    int regressions, fixes, changes;
} tally;

/* One side of the comparison: the report and its cases array. */
typedef struct side {
    const char *path;
    cJSON *root;
    const cJSON *cases;
} side;

/* ---- reading -------------------------------------------------------------- */

static int load_side(side *s, const char *path)
{
    cg_status st = CG_STATUS_OK;
    s->path = path;
    s->root = cg_report_json_load(path, &st);
    if (!s->root) {
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        return -1;
    }
    s->cases = cJSON_GetObjectItemCaseSensitive(s->root, "cases");
    return 0;
}

/* ---- keys ----------------------------------------------------------------- */

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* "" when the case ran under its report's run-wide rule set, else its name
 * ("-" for none): how a --rules A report lines up with a --rules B one. */
static const char *case_rules_key(const side *s, const cJSON *c)
{
    const char *r = cg_json_str(c, "rules");
    return same_str(r, cg_json_str(s->root, "rules")) ? "" : r ? r : "-";
}

/* "" when the check belongs to its case's own rule set, "-" when to none. */
static const char *check_rules_key(const cJSON *c, const cJSON *k)
{
    const char *r = cg_json_str(k, "rules");
    return !r ? "-" : same_str(r, cg_json_str(c, "rules")) ? "" : r;
}

static bool same_case(const side *a, const cJSON *ca, const side *b, const cJSON *cb)
{
    return same_str(cg_json_str(ca, "name"), cg_json_str(cb, "name")) &&
           cg_json_num(ca, "world", 0) == cg_json_num(cb, "world", 0) &&
           strcmp(case_rules_key(a, ca), case_rules_key(b, cb)) == 0;
}

static bool same_check(const cJSON *ca, const cJSON *a, const cJSON *cb, const cJSON *b)
{
    return same_str(cg_json_str(a, "tensor"), cg_json_str(b, "tensor")) &&
           cg_json_num(a, "rank", -1) == cg_json_num(b, "rank", -1) &&
           same_str(cg_json_str(a, "semantics"), cg_json_str(b, "semantics")) &&
           same_str(cg_json_str(a, "against"), cg_json_str(b, "against")) &&
           strcmp(check_rules_key(ca, a), check_rules_key(cb, b)) == 0;
}

/* ---- labels and values ---------------------------------------------------- */

/* "name W=2 rules=reference", "... rules=reference -> torch-nn" */
static void case_label(const cJSON *old, const cJSON *new, char *buf, size_t len)
{
    const cJSON *c = old ? old : new;
    const char *ro = old ? cg_json_str(old, "rules") : NULL, *rn = new ? cg_json_str(new, "rules") : NULL;
    int n = snprintf(buf, len, "%s W=%d", cg_json_str(c, "name"), cg_json_int(c, "world", 0));
    if (n < 0 || (size_t)n >= len)
        return;
    if (old && new && !same_str(ro, rn))
        snprintf(buf + n, len - (size_t)n, " rules=%s -> %s", ro ? ro : "none", rn ? rn : "none");
    else if (ro || rn)
        snprintf(buf + n, len - (size_t)n, " rules=%s", ro ? ro : rn);
}

/* "per_rank(x) rank 0", "per_rank(x) rank 1 rules=torch-nn vs case", "finite_difference" */
static void check_label(const cJSON *c, const cJSON *k, char *buf, size_t len)
{
    const char *tensor = cg_json_str(k, "tensor"), *sem = cg_json_str(k, "semantics");
    const char *rules = cg_json_str(k, "rules"), *key = check_rules_key(c, k);
    int rank = cg_json_int(k, "rank", -1);
    char rank_part[32] = "", rules_part[96] = "";
    if (rank >= 0)
        snprintf(rank_part, sizeof rank_part, " rank %d", rank);
    bool vs_case = same_str(cg_json_str(k, "against"), "case");
    if (rules && (vs_case || key[0]))
        snprintf(rules_part, sizeof rules_part, " rules=%s", rules);
    if (tensor && tensor[0])
        snprintf(buf, len, "%s(%s)%s%s%s", sem ? sem : "?", tensor, rank_part, rules_part,
                 vs_case ? " vs case" : "");
    else
        snprintf(buf, len, "%s%s%s%s", sem ? sem : "?", rank_part, rules_part,
                 vs_case ? " vs case" : "");
}

static const char *status_of(const cJSON *o)
{
    const char *s = cg_json_str(o, "status");
    return s ? s : "?";
}

static bool is_pass(const char *s) { return strcmp(s, "pass") == 0; }
static bool is_bad(const char *s) { return strcmp(s, "fail") == 0 || strcmp(s, "error") == 0; }
static bool was_checked(const char *s) { return is_pass(s) || strcmp(s, "fail") == 0; }

/* compare.h: newly bad (pass or skip to fail or error), a failure that
 * became an error, or something checked (pass or fail) that is now skipped:
 * each hides what the check would catch. */
static bool is_regression(const char *old, const char *new)
{
    if (strcmp(old, new) == 0)
        return false;
    return (is_bad(new) && !is_bad(old)) || (strcmp(new, "error") == 0 && strcmp(old, "fail") == 0) ||
           (strcmp(new, "skip") == 0 && was_checked(old));
}

static void count(tally *t, const char *old, const char *new)
{
    if (is_regression(old, new))
        t->regressions++;
    else if (is_bad(old) && is_pass(new))
        t->fixes++;
    else
        t->changes++;
}

/* Element i of a values array; JSON null (NaN or Inf when written) is NaN. */
static double value_at(const cJSON *k, const char *key, int i)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(k, key), i);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int values_len(const cJSON *k, const char *key)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(k, key);
    return cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
}

/* " (expected 40, observed 20)" at the first bad element, or the note. */
static void print_evidence(const cJSON *k)
{
    int n = values_len(k, "observed");
    int i = cg_json_int(k, "first_bad_index", -1);
    if (i < 0 || i >= n)
        i = 0;
    const char *note = cg_json_str(k, "note");
    if (n > 0 && values_len(k, "expected") > i) {
        printf(" (expected %.10g, observed %.10g", value_at(k, "expected", i),
               value_at(k, "observed", i));
        if (n > 1)
            printf(" at [%d]", i);
        putchar(')');
    } else if (note) {
        printf(" (%s)", note);
    }
}

/* ---- the comparison ------------------------------------------------------- */

static bool moved(double old, double new)
{
    if (isnan(old) || isnan(new))
        return isnan(old) != isnan(new);
    return fabs(new - old) > fmax(1e-9, 1e-6 * fabs(old));
}

/* Both pass: report an observed value that moved, as a change. */
static void compare_values(const char *label, const cJSON *old, const cJSON *new, tally *t)
{
    int n = values_len(old, "observed"), m = values_len(new, "observed");
    if (n != m) {
        printf("%s: value changed (%d -> %d elements)\n", label, n, m);
        t->changes++;
        return;
    }
    for (int i = 0; i < n; i++) {
        double a = value_at(old, "observed", i), b = value_at(new, "observed", i);
        if (moved(a, b)) {
            printf("%s: value changed (observed %.10g -> %.10g", label, a, b);
            printf(n > 1 ? " at [%d])\n" : ")\n", i);
            t->changes++;
            return;
        }
    }
}

static void compare_check(const char *where, const cJSON *co, const cJSON *old, const cJSON *new,
                          tally *t)
{
    char what[256], label[640];
    check_label(co, old, what, sizeof what);
    snprintf(label, sizeof label, "%s: %s", where, what);
    const char *so = status_of(old), *sn = status_of(new);
    if (!same_str(so, sn)) {
        printf("%s: %s -> %s", label, so, sn);
        print_evidence(new);
        putchar('\n');
        count(t, so, sn);
    } else if (is_pass(so)) {
        compare_values(label, old, new, t);
    }
}

/* A case or check in one report only. Gone from NEW is a regression unless
 * it was skipped in OLD (nothing was checked that is no longer). */
static void count_only_in(tally *t, bool in_old, const char *status)
{
    if (in_old && strcmp(status, "skip") != 0)
        t->regressions++;
    else
        t->changes++;
}

static void only_in(const char *where, bool in_old, bool expected, const cJSON *c, const cJSON *k, tally *t)
{
    char what[256];
    check_label(c, k, what, sizeof what);
    printf("%s: %s: only in %s (%s)\n", where, what, in_old ? "OLD" : "NEW", status_of(k));
    if (expected)
        t->changes++;
    else
        count_only_in(t, in_old, status_of(k));
}

/* An expectation scoped to the rule set the OLD case ran under (`expect ...
 * rules=NAME`) when NEW ran another one: it cannot apply in NEW, so its
 * absence there is a change, not a regression. */
static bool scoped_to_old_rules(const cJSON *co, const cJSON *cn, const cJSON *k)
{
    const char *r = cg_json_str(k, "rules"), *rules_old = cg_json_str(co, "rules");
    return r && same_str(cg_json_str(k, "against"), "case") && cg_rules_name_covers(r, rules_old) &&
           !same_str(rules_old, cg_json_str(cn, "rules"));
}

/* Checks pair up in order: the n-th check of a key in OLD with the n-th in NEW. */
static int compare_checks(const char *where, const cJSON *co, const cJSON *cn, tally *t)
{
    const cJSON *ko = cJSON_GetObjectItemCaseSensitive(co, "checks");
    const cJSON *kn = cJSON_GetObjectItemCaseSensitive(cn, "checks");
    ko = cJSON_IsArray(ko) ? ko : NULL; /* a case without checks compares as none */
    kn = cJSON_IsArray(kn) ? kn : NULL;
    int nn = kn ? cJSON_GetArraySize(kn) : 0;
    bool *used = calloc((size_t)nn + 1, sizeof *used);
    if (!used)
        return -1;
    const cJSON *a, *b;
    cJSON_ArrayForEach(a, ko)
    {
        int j = 0;
        cJSON_ArrayForEach(b, kn)
        {
            if (!used[j] && same_check(co, a, cn, b))
                break;
            j++;
        }
        if (b) {
            used[j] = true;
            compare_check(where, co, a, b, t);
        } else {
            only_in(where, true, scoped_to_old_rules(co, cn, a), co, a, t);
        }
    }
    int j = 0;
    cJSON_ArrayForEach(b, kn)
    {
        if (!used[j++])
            only_in(where, false, false, cn, b, t);
    }
    free(used);
    return 0;
}

static int compare_case(const cJSON *co, const cJSON *cn, tally *t)
{
    char where[320];
    case_label(co, cn, where, sizeof where);
    const char *so = status_of(co), *sn = status_of(cn);
    if (!same_str(so, sn)) {
        const char *msg = cg_json_str(cn, "message");
        printf("%s: %s -> %s%s%s%s\n", where, so, sn, msg ? " (" : "", msg ? msg : "",
               msg ? ")" : "");
        count(t, so, sn);
    }
    return compare_checks(where, co, cn, t);
}

static void case_only_in(const cJSON *c, bool in_old, tally *t)
{
    char where[320];
    case_label(in_old ? c : NULL, in_old ? NULL : c, where, sizeof where);
    const char *st = status_of(c);
    printf("%s: only in %s (%s)\n", where, in_old ? "OLD" : "NEW", st);
    count_only_in(t, in_old, st); /* a case that stopped being run hides whatever it caught */
}

static int compare_reports(const side *old, const side *new, tally *t)
{
    int nn = cJSON_GetArraySize(new->cases);
    bool *used = calloc((size_t)nn + 1, sizeof *used);
    if (!used)
        return -1;
    int rc = 0;
    const cJSON *a, *b;
    cJSON_ArrayForEach(a, old->cases)
    {
        int j = 0;
        cJSON_ArrayForEach(b, new->cases)
        {
            if (!used[j] && same_case(old, a, new, b))
                break;
            j++;
        }
        if (!b) {
            case_only_in(a, true, t);
            continue;
        }
        used[j] = true;
        if (compare_case(a, b, t) != 0)
            rc = -1;
    }
    int j = 0;
    cJSON_ArrayForEach(b, new->cases)
    {
        if (!used[j++])
            case_only_in(b, false, t);
    }
    free(used);
    return rc;
}

int cg_compare_main(int argc, char **argv)
{
    static const char usage[] = "usage: collgrad-check compare OLD.json NEW.json\n";
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return CG_EXIT_OK;
    }
    if (argc != 3) {
        fputs(usage, stderr);
        return CG_EXIT_USAGE;
    }
    side old = {0}, new = {0};
    int rc = CG_EXIT_USAGE;
    if (load_side(&old, argv[1]) == 0 && load_side(&new, argv[2]) == 0) {
        tally t = {0};
        if (compare_reports(&old, &new, &t) != 0) {
            fprintf(stderr, "collgrad-check: out of memory\n");
            rc = CG_EXIT_INFRA;
        } else {
            printf("%d regressions, %d fixes, %d changes\n", t.regressions, t.fixes, t.changes);
            rc = t.regressions ? CG_EXIT_FAIL : CG_EXIT_OK;
        }
    }
    cJSON_Delete(old.root);
    cJSON_Delete(new.root);
    return rc;
}
