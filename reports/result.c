/* result.c — building and comparing results (result.h). */
#include "result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *cg_outcome_name(cg_outcome s)
{
    static const char *const names[] = {"pass", "fail", "error", "skip"};
    return (unsigned)s < 4 ? names[s] : "?";
}

/* Defaults chosen like torch.testing.assert_close: a few ULPs of the dtype
 * relative, with an absolute floor for values near zero. */
cg_tol cg_tol_for(cg_dtype dt)
{
    switch (dt) {
    case CG_F32: return (cg_tol){1e-5, 1e-5, dt};
    case CG_BF16: return (cg_tol){1.6e-2, 1e-2, dt};
    case CG_F16: return (cg_tol){2e-3, 1e-3, dt};
    case CG_F64:
    default: return (cg_tol){1e-9, 1e-12, CG_F64};
    }
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int cg_case_add_warning(cg_case_result *c, const char *text)
{
    char **w = realloc(c->warnings, (size_t)(c->nwarnings + 1) * sizeof *w);
    if (!w)
        return -1;
    c->warnings = w;
    if (!(w[c->nwarnings] = strdup(text)))
        return -1;
    c->nwarnings++;
    return 0;
}

void cg_case_set_diagnosis(cg_case_result *c, const char *const *matches, int n, const char *explanation,
                           const char *see)
{
    c->diag_matches = n > 0 ? calloc((size_t)n, sizeof *c->diag_matches) : NULL;
    for (int i = 0; c->diag_matches && i < n; i++)
        if ((c->diag_matches[i] = strdup(matches[i])))
            c->ndiag = i + 1;
    c->diag_explanation = dup_or_null(explanation);
    c->diag_see = dup_or_null(see);
}

void cg_case_set_rules(cg_case_result *c, const char *rules)
{
    free(c->rules);
    c->rules = dup_or_null(rules);
}

cg_report *cg_report_new(const char *mode, const char *transport, const char *rules,
                         const char *device)
{
    cg_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->mode = dup_or_null(mode);
    r->transport = dup_or_null(transport);
    r->rules = dup_or_null(rules);
    r->device = dup_or_null(device);
    return r;
}

static void framework_free(cg_framework *f)
{
    char *fields[] = {f->name, f->version, f->api, f->backend, f->python, f->isolation};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        free(fields[i]);
    memset(f, 0, sizeof *f);
}

void cg_report_set_framework(cg_report *r, const cg_framework *f)
{
    framework_free(&r->framework);
    free(r->inject_spec);
    free(r->inject_reason);
    r->framework = (cg_framework){dup_or_null(f->name), dup_or_null(f->version), dup_or_null(f->api),
                                  dup_or_null(f->backend), dup_or_null(f->python),
                                  dup_or_null(f->isolation)};
}

static void check_free(cg_check *k)
{
    free(k->tensor);
    free(k->semantics);
    free(k->rules);
    free(k->against);
    free(k->expected);
    free(k->observed);
    free(k->note);
}

static void case_free(cg_case_result *c)
{
    for (int i = 0; i < c->nchecks; i++)
        check_free(&c->checks[i]);
    free(c->checks);
    free(c->name);
    free(c->rules);
    free(c->file);
    free(c->source);
    free(c->message);
    free(c->ran);
    free(c->replicated_reason);
    free(c->fd_note);
    for (int i = 0; i < c->nwarnings; i++)
        free(c->warnings[i]);
    free(c->warnings);
    for (int i = 0; i < c->ndiag; i++)
        free(c->diag_matches[i]);
    free(c->diag_matches);
    free(c->diag_explanation);
    free(c->diag_see);
}

void cg_report_free(cg_report *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->ncases; i++)
        case_free(&r->cases[i]);
    free(r->cases);
    free(r->mode);
    free(r->transport);
    free(r->rules);
    free(r->device);
    framework_free(&r->framework);
    free(r->inject_spec);
    free(r->inject_reason);
    free(r);
}

void cg_report_set_injection(cg_report *r, const char *spec, long injected, const char *reason)
{
    free(r->inject_spec);
    free(r->inject_reason);
    r->inject_spec = dup_or_null(spec);
    r->injected = injected;
    r->inject_reason = dup_or_null(reason);
}

cg_case_result *cg_report_add_case(cg_report *r, const char *name, const char *file,
                                   const char *source, int world)
{
    if (r->ncases == r->capcases) {
        int cap = r->capcases ? 2 * r->capcases : 32;
        cg_case_result *c = realloc(r->cases, (size_t)cap * sizeof *c);
        if (!c)
            return NULL;
        r->cases = c;
        r->capcases = cap;
    }
    cg_case_result *c = &r->cases[r->ncases++];
    memset(c, 0, sizeof *c);
    c->name = dup_or_null(name);
    c->file = dup_or_null(file);
    c->source = dup_or_null(source);
    c->world = world;
    c->fd_status = CG_SKIP;
    c->injected = -1;
    return c;
}

/* ULP distance measured in units of the dtype's epsilon at |expected|. */
static double ulp_distance(double e, double o, cg_dtype dt)
{
    double unit = cg_dtype_eps(dt) * fmax(fabs(e), dt == CG_F64 ? 0x1p-1022 : 0x1p-126);
    return fabs(o - e) / unit;
}

cg_outcome cg_compare(const double *expected, const double *observed, int64_t n, cg_tol tol,
                     double *max_abs, double *max_rel, double *max_ulp, int64_t *first_bad)
{
    *max_abs = *max_rel = *max_ulp = 0.0;
    *first_bad = -1;
    for (int64_t i = 0; i < n; i++) {
        double e = expected[i], o = observed[i];
        bool ok;
        if (isnan(e) || isnan(o)) {
            ok = isnan(e) && isnan(o);
            if (!ok)
                *max_abs = *max_rel = *max_ulp = INFINITY;
        } else if (isinf(e) || isinf(o)) {
            ok = e == o;
            if (!ok)
                *max_abs = *max_rel = *max_ulp = INFINITY;
        } else {
            double d = fabs(o - e);
            ok = d <= tol.atol + tol.rtol * fabs(e);
            *max_abs = fmax(*max_abs, d);
            *max_rel = fmax(*max_rel, d / fmax(fabs(e), 1e-300));
            *max_ulp = fmax(*max_ulp, ulp_distance(e, o, tol.dtype));
        }
        if (!ok && *first_bad < 0)
            *first_bad = i;
    }
    return *first_bad < 0 ? CG_PASS : CG_FAIL;
}

static cg_check *new_check(cg_case_result *c, const char *tensor, int rank, const char *semantics,
                           const char *rules, const char *against)
{
    if (c->nchecks == c->capchecks) {
        int cap = c->capchecks ? 2 * c->capchecks : 16;
        cg_check *k = realloc(c->checks, (size_t)cap * sizeof *k);
        if (!k)
            return NULL;
        c->checks = k;
        c->capchecks = cap;
    }
    cg_check *k = &c->checks[c->nchecks++];
    memset(k, 0, sizeof *k);
    k->tensor = strdup(tensor ? tensor : "");
    k->rank = rank;
    k->semantics = strdup(semantics);
    k->rules = dup_or_null(rules);
    k->against = dup_or_null(against);
    k->first_bad = -1;
    return k;
}

static double *copy_doubles(const double *v, int64_t n)
{
    double *c = malloc(((size_t)n + 1) * sizeof *c);
    if (c && n > 0)
        memcpy(c, v, (size_t)n * sizeof *c);
    return c;
}

cg_check *cg_case_add_check(cg_case_result *c, const char *tensor, int rank,
                            const char *semantics, const char *rules, const char *against,
                            const double *expected, const double *observed, int64_t n, cg_tol tol)
{
    cg_check *k = new_check(c, tensor, rank, semantics, rules, against);
    if (!k)
        return NULL;
    k->numel = n;
    k->expected = copy_doubles(expected, n);
    k->observed = copy_doubles(observed, n);
    if (!k->expected || !k->observed)
        return NULL;
    k->status = cg_compare(expected, observed, n, tol, &k->max_abs_err, &k->max_rel_err, &k->max_ulp,
                           &k->first_bad);
    return k;
}

cg_check *cg_case_add_note(cg_case_result *c, const char *tensor, int rank, const char *semantics,
                           const char *rules, cg_outcome st, const char *note)
{
    cg_check *k = new_check(c, tensor, rank, semantics, rules, NULL);
    if (!k)
        return NULL;
    k->status = st;
    k->note = dup_or_null(note);
    return k;
}

void cg_case_finish(cg_case_result *c)
{
    if (c->status == CG_ERROR || c->status == CG_SKIP)
        return;
    c->status = CG_PASS;
    for (int i = 0; i < c->nchecks; i++)
        if (c->checks[i].status == CG_FAIL || c->checks[i].status == CG_ERROR)
            c->status = CG_FAIL;
}

void cg_report_count(cg_report *r)
{
    r->passed = r->failed = r->errors = r->skipped = 0;
    for (int i = 0; i < r->ncases; i++)
        switch (r->cases[i].status) {
        case CG_PASS: r->passed++; break;
        case CG_FAIL: r->failed++; break;
        case CG_ERROR: r->errors++; break;
        case CG_SKIP: r->skipped++; break;
        }
}
