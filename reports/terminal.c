/* terminal.c — see terminal.h. */
#include "terminal.h"

#include <string.h>

static const char *status_word(cg_outcome s)
{
    switch (s) {
    case CG_PASS: return "Passed";
    case CG_FAIL: return "***Failed";
    case CG_ERROR: return "***Error";
    case CG_SKIP: return "Skipped";
    }
    return "?";
}

static void print_values(FILE *f, const char *label, const double *v, int64_t n)
{
    fprintf(f, "%s[", label);
    for (int64_t i = 0; i < n && i < 8; i++)
        fprintf(f, "%s%.10g", i ? ", " : "", v[i]);
    fprintf(f, "%s]", n > 8 ? ", ..." : "");
}

static void print_check(FILE *f, const cg_check *k)
{
    fprintf(f, "        %s %s(%s)", cg_outcome_name(k->status), k->semantics, k->tensor);
    if (k->rank >= 0)
        fprintf(f, " rank %d", k->rank);
    if (k->rules)
        fprintf(f, " rules=%s", k->rules);
    if (k->numel > 0) {
        print_values(f, ": expected ", k->expected, k->numel);
        print_values(f, " observed ", k->observed, k->numel);
        fprintf(f, " (max abs err %.3g, first bad index %lld", k->max_abs_err, (long long)k->first_bad);
        if (k->first_bad >= 8 && k->first_bad < k->numel) /* past the values shown: say it */
            fprintf(f, ": expected %.10g, observed %.10g", k->expected[k->first_bad], k->observed[k->first_bad]);
        fputc(')', f);
    }
    if (k->note)
        fprintf(f, ": %s", k->note);
    fputc('\n', f);
}

void cg_term_case(FILE *f, const cg_case_result *c, int index, int total, bool verbose)
{
    char label[160];
    if (c->rules && strcmp(c->rules, "reference") != 0)
        snprintf(label, sizeof label, "%s (W=%d, rules=%s) ", c->name, c->world, c->rules);
    else
        snprintf(label, sizeof label, "%s (W=%d) ", c->name, c->world);
    int width = total >= 100 ? 3 : total >= 10 ? 2 : 1;
    fprintf(f, "%*d/%d %s", width, index, total, label);
    for (size_t i = strlen(label); i < 56; i++)
        fputc('.', f);
    fprintf(f, " %-10s %7.3f s\n", status_word(c->status), c->duration_s);
    if (c->status == CG_ERROR && c->message)
        fprintf(f, "        %s\n", c->message);
    for (int i = 0; i < c->nwarnings; i++)
        fprintf(f, "        warning: %s\n", c->warnings[i]);
    if (c->diag_explanation)
        fprintf(f, "        diagnosis: %s%s%s%s\n", c->diag_explanation, c->diag_see ? " (see " : "",
                c->diag_see ? c->diag_see : "", c->diag_see ? ")" : "");
    for (int i = 0; i < c->nchecks; i++)
        if (verbose || c->checks[i].status == CG_FAIL || c->checks[i].status == CG_ERROR)
            print_check(f, &c->checks[i]);
    fflush(f);
}

void cg_term_summary(FILE *f, const cg_report *r, double seconds)
{
    /* the percentage is of the cases that ran: a skipped case is neither a
     * pass nor a failure, and is counted apart */
    int ran = r->passed + r->failed + r->errors;
    if (ran)
        fprintf(f, "\n%d%% cases passed (%d of %d); %d failed, %d errors, %d skipped; %.2f s\n",
                (100 * r->passed + ran / 2) / ran, r->passed, ran, r->failed, r->errors, r->skipped, seconds);
    else
        fprintf(f, "\nno case ran; %d skipped; %.2f s\n", r->skipped, seconds);
    /* the plain line CI greps: an error (a case that could not be judged) is not a failure */
    fprintf(f, "%d passed, %d failed, %d errors, %d skipped\n", r->passed, r->failed, r->errors, r->skipped);
    fflush(f);
}
