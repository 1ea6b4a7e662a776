/* explore_run.c — judging explore's programs (explore_run.h). */
#include "explore_run.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectives.h"
#include "judge.h"
#include "report_json.h"

/* The atol a program needs (explore_run.h): the dtype's rtol times its
 * largest |per-rank gradient|, or, where more, 16 unit roundoffs of the
 * dtype times its largest |value| times W(W+1), the sum over ranks of the
 * losses' 2 (rank + 1) weights (explore's losses are sum(t * t) *
 * (rank + 1)): gradients that cancel to 0 from nonzero terms
 * (`all_reduce(v - mean(v))`) round at their terms' magnitude; or 16 unit
 * roundoffs times its largest gradient, which exceeds the first only for
 * bf16 and f16, whose rtol is a few unit roundoffs: a gradient that sums
 * many terms of the largest's size (log_softmax's over 98 elements, f16 at
 * W=7: 44 off in 7364 where the largest is 14551) rounds at theirs. */
static double program_atol(const cg_oracle *o, cg_dtype dt, double *grad)
{
    double g = 0, v = 0;
    for (int i = 0; i < o->ntensors; i++)
        for (int64_t k = 0; k < o->tensors[i].numel; k++) {
            const cg_otensor *t = &o->tensors[i];
            if (t->per_rank && isfinite(t->per_rank[k]))
                g = fmax(g, fabs(t->per_rank[k]));
            if (t->value && isfinite(t->value[k]))
                v = fmax(v, fabs(t->value[k]));
        }
    double u = dt == CG_F32 ? 0x1p-24 : dt == CG_BF16 ? 0x1p-8 : dt == CG_F16 ? 0x1p-11 : 0x1p-53;
    *grad = g;
    return fmax(fmax(cg_tol_for(dt).rtol, 16 * u) * g, 16 * u * v * o->world * (o->world + 1));
}

/* Whether the oracle's values of tensor `name` tie across ranks for max
 * (or min) at some element: the best and another rank's within 1e-4 of it
 * (relative, at least 1e-4 absolute). The oracle computes in f64; an f32
 * run rounds values that tie in exact arithmetic to either side. */
static bool ties(const cg_oracle *o, const char *name, size_t len, bool max)
{
    const cg_otensor *by_rank[CG_MAX_WORLD] = {0};
    int n = 0;
    for (int i = 0; i < o->ntensors && n < CG_MAX_WORLD; i++)
        if (strlen(o->tensors[i].name) == len && strncmp(o->tensors[i].name, name, len) == 0 &&
            o->tensors[i].value)
            by_rank[n++] = &o->tensors[i];
    for (int64_t k = 0; n > 1 && k < by_rank[0]->numel; k++) {
        double best = by_rank[0]->value[k];
        for (int r = 1; r < n; r++)
            if (k < by_rank[r]->numel)
                best = max ? fmax(best, by_rank[r]->value[k]) : fmin(best, by_rank[r]->value[k]);
        int near = 0;
        for (int r = 0; r < n; r++)
            near += k < by_rank[r]->numel && fabs(by_rank[r]->value[k] - best) <= 1e-6 * fmax(1, fabs(best));
        if (near > 1)
            return true;
    }
    return false;
}

/* The generator gives MAX/MIN only values that differ between ranks
 * (explore_gen_coll.c), but some differ in its bookkeeping only:
 * mean(softmax(v4), 1) is 1/columns on every rank (seed 22, program 136: a
 * reduce max of it, whose gradient goes to whichever rank the rounding
 * favours). The program with each such max/min collective made a sum, as
 * the generator does where it knows values may be equal; NULL when none
 * ties (or out of memory). */
static char *untie(const char *text, const cg_oracle *o)
{
    char *out = strdup(text);
    bool changed = false;
    for (char *line = out; out && *line;) {
        char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        for (int k = 0; k < CG_C_COUNT; k++) { /* every collective that takes a reduction op */
            char coll[48];
            snprintf(coll, sizeof coll, " = %s(", cg_coll_name((cg_coll_kind)k));
            char *call = cg_coll_has_op((cg_coll_kind)k) ? strstr(line, coll) : NULL;
            if (!call || call >= line + n)
                continue;
            char *arg = call + strlen(coll), *comma = strchr(arg, ',');
            char *op = NULL;
            for (char *q = arg; q + 4 <= line + n && !op; q++)
                if (strncmp(q, ", max", 5) == 0 || strncmp(q, ", min", 5) == 0)
                    op = q + 2;
            if (comma && op && ties(o, arg, (size_t)(comma - arg), op[1] == 'a')) {
                memcpy(op, "sum", 3);
                changed = true;
            }
        }
        line += n + (eol ? 1 : 0);
    }
    if (!changed) {
        free(out);
        return NULL;
    }
    return out;
}

/* The class (cg_explore_oracle_class), the atol the program's checks need
 * and its largest |gradient| (both 0 when the oracle did not run). With
 * untied: where a max/min collective's input ties (untie), *untied gets the
 * program with it made a sum and nothing is judged (the caller judges that). */
static void judge_by_oracle(const char *text, const char *file, char cls[CG_CLASS_LEN], double *atol,
                            double *grad, char **untied)
{
    cls[0] = '\0';
    *atol = *grad = 0;
    cg_status st = CG_STATUS_OK;
    cg_case *cs = cg_parse_case(file, text, strlen(text), &st);
    if (!cs) {
        snprintf(cls, CG_CLASS_LEN, "generator: the parser refuses it");
        return;
    }
    cg_oracle *o = cg_oracle_run(cs, cs->worlds[0], true);
    if (!o || o->st.code) {
        snprintf(cls, CG_CLASS_LEN, "generator: the oracle refuses it");
    } else if (untied && (*untied = untie(text, o)) != NULL) {
        /* judged as the program it becomes */
    } else {
        *atol = program_atol(o, cs->dtype, grad);
        cg_report *rep = cg_report_new("oracle", "none", "reference", "cpu");
        cg_case_result *res = rep ? cg_report_add_case(rep, cs->name, cs->file, NULL, o->world) : NULL;
        cg_judge_job j = {cs, o, NULL, {NULL, false, cg_case_tol(cs, cg_tol_for(cs->dtype)), NULL}, false, false,
                          NULL, NULL, NULL};
        if (!res)
            snprintf(cls, CG_CLASS_LEN, "tool: out of memory");
        else if (cg_judge(&j, res) != 0 || (cg_case_finish(res), res->status != CG_PASS))
            snprintf(cls, CG_CLASS_LEN, "tool: oracle vs finite differences");
        cg_report_free(rep);
    }
    cg_oracle_free(o);
    cg_case_free(cs);
}

void cg_explore_oracle_class(const char *text, const char *file, char cls[CG_CLASS_LEN], double *atol)
{
    double a = 0, g = 0;
    judge_by_oracle(text, file, cls, &a, &g, NULL);
    if (atol)
        *atol = a;
}

/* f16's largest finite value is 65504; a gradient beyond it is inf in an
 * honest f16 run. The generator bounds values (explore_gen.c), not
 * gradients, which grow with each collective whose backward sums over the
 * ranks (seed 21, program 170: all_gather, all_reduce, all_gather,
 * all_gather at W=5 gave 93750). Such a program's losses are scaled by a
 * power of two (exact in every float type: mixed-precision training's loss
 * scaling) until its largest gradient is at most F16_GRAD_LIMIT. */
enum { F16_GRAD_LIMIT = 4096 };

static bool is_f16(const char *text)
{
    const char *dtype = strstr(text, "\ndtype ");
    return dtype && strncmp(dtype + 7, "f16\n", 4) == 0;
}

/* text with every backward's loss times scale: ` * scale` before the last
 * `)` of each line that calls backward. malloc'd, or NULL. */
static char *scale_losses(const char *text, double scale)
{
    char factor[48];
    int flen = snprintf(factor, sizeof factor, " * %.17g", scale);
    size_t len = strlen(text), lines = 1;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    char *out = malloc(len + lines * (size_t)flen + 1), *o = out;
    for (const char *line = text; out && *line;) {
        const char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        const char *close = NULL;
        bool calls = false;
        for (size_t k = 0; k + 9 <= n && !calls; k++)
            calls = strncmp(line + k, "backward(", 9) == 0;
        if (calls)
            for (const char *c = line + n; c > line && !close; c--)
                if (c[-1] == ')')
                    close = c - 1;
        size_t head = close ? (size_t)(close - line) : n;
        memcpy(o, line, head);
        o += head;
        if (close) {
            memcpy(o, factor, (size_t)flen);
            o += flen;
            memcpy(o, close, n - head);
            o += n - head;
        }
        if (eol)
            *o++ = '\n';
        line += n + (eol ? 1 : 0);
    }
    if (out)
        *o = '\0';
    return out;
}

char *cg_explore_judged(const char *text, const char *file, char cls[CG_CLASS_LEN])
{
    double atol = 0, grad = 0;
    char *own = NULL;
    judge_by_oracle(text, file, cls, &atol, &grad, &own);
    if (own)
        judge_by_oracle(own, file, cls, &atol, &grad, NULL);
    if (!cls[0] && grad > F16_GRAD_LIMIT && is_f16(own ? own : text)) {
        double scale = 1;
        while (grad * scale > F16_GRAD_LIMIT)
            scale /= 2;
        char *scaled = scale_losses(own ? own : text, scale);
        free(own);
        if (!(own = scaled))
            return NULL;
        judge_by_oracle(own, file, cls, &atol, &grad, NULL);
    }
    char *out = cg_explore_with_tolerance(own ? own : text, atol);
    free(own);
    return out;
}

char *cg_explore_with_tolerance(const char *text, double atol)
{
    const char *dtype = strstr(text, "\ndtype ");
    const char *eol = dtype ? strchr(dtype + 1, '\n') : NULL;
    cg_dtype dt = CG_F64;
    if (dtype && strncmp(dtype + 7, "f32", 3) == 0)
        dt = CG_F32;
    else if (dtype && strncmp(dtype + 7, "bf16", 4) == 0)
        dt = CG_BF16;
    else if (dtype && strncmp(dtype + 7, "f16", 3) == 0)
        dt = CG_F16;
    cg_tol tol = cg_tol_for(dt);
    if (!eol || !(atol > tol.atol))
        return strdup(text);
    char line[96];
    int n = snprintf(line, sizeof line, "tolerance rtol=%.3g atol=%.4g\n", tol.rtol, atol);
    size_t head = (size_t)(eol + 1 - text), len = strlen(text);
    char *out = malloc(len + (size_t)n + 1);
    if (out) {
        memcpy(out, text, head);
        memcpy(out + head, line, (size_t)n);
        memcpy(out + head + (size_t)n, text + head, len - head + 1);
    }
    return out;
}

int cg_explore_run_tool(const char *const *extra, const char *json, const char *log, const char *const *paths,
                        int npaths)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    const char *argv[96];
    int a = 0;
    argv[a++] = self;
    for (int i = 0; extra && extra[i] && a < 80; i++)
        argv[a++] = extra[i];
    argv[a++] = "--json";
    argv[a++] = json;
    for (int i = 0; i < npaths && a < 95; i++)
        argv[a++] = paths[i];
    argv[a] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        close(fd);
        execv(self, (char *const *)argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 3)
        return -1;
    return WEXITSTATUS(status);
}

int cg_explore_observed_comment(const char *json, const char *under, FILE *f)
{
    cg_status st = CG_STATUS_OK;
    cJSON *root = cg_report_json_load(json, &st);
    if (!root)
        return -1;
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "cases"), 0), *k;
    fprintf(f, "\n# observed under %s (%s):\n", under, c ? cg_json_str(c, "status") : "no result");
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(c, "checks"))
    {
        const char *sem = cg_json_str(k, "semantics"), *tensor = cg_json_str(k, "tensor");
        const char *against = cg_json_str(k, "against"), *note = cg_json_str(k, "note");
        int rank = cg_json_int(k, "rank", -1);
        char values[1024];
        if (sem && strcmp(sem, "per_rank") == 0 && against && strcmp(against, "oracle") == 0 && tensor &&
            tensor[0] == 'x') { /* the generator's params are x0, x1, ... */
            cg_json_numbers_text(cJSON_GetObjectItemCaseSensitive(k, "observed"), 16, 10, values, sizeof values);
            fprintf(f, "#   grad(%s) rank %d: %s\n", tensor, rank, values);
        } else if (sem && strcmp(sem, "error") == 0 && note) {
            if (rank >= 0)
                fprintf(f, "#   error rank %d: %s\n", rank, note);
            else
                fprintf(f, "#   error: %s\n", note);
        }
    }
    const char *message = c ? cg_json_str(c, "message") : NULL;
    if (message)
        fprintf(f, "#   %s\n", message);
    cJSON_Delete(root);
    return 0;
}
