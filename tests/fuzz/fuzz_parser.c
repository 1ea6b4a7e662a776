/* fuzz_parser.c — libFuzzer target for the case language (scripts/fuzz.sh).
 *
 * Every input goes through cg_parse_case(), which must return a case or an
 * error and never crash, leak or read past the buffer (libFuzzer hands over
 * exactly `size` bytes, not NUL-terminated). A parsed case must print back
 * to text that parses to the same case, and, when it is small, it runs in
 * the oracle at its first world size.
 *
 * The oracle has no cap of its own on tensor sizes (ones(20000, 20000) takes
 * gigabytes, eye(3000) @ eye(3000) minutes), so the oracle only runs when a
 * conservative static bound says every tensor stays small: sizes and integer
 * magnitudes are bounded per expression, and anything the bound cannot see
 * through (a dimension computed from a tensor, a division) skips the run. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "oracle.h"

#define ORACLE_MAX_INPUT 2048      /* bytes: longer inputs are parsed only */
#define ORACLE_MAX_WORLD 4
#define ORACLE_MAX_STMTS 64        /* statements, on-block bodies included */
#define ORACLE_MAX_NAMES 128
#define ORACLE_MAX_NUMEL 16384.0   /* elements of any one tensor */
#define ORACLE_MAX_WORK 262144.0   /* element operations per rank, forward */

/* ---- the static bound ----------------------------------------------------- */

/* What is known about a value: at most `numel` elements, each of magnitude at
 * most `mag` (INFINITY: unknown). mag bounds integers used as dimensions. */
typedef struct bound {
    double numel, mag;
} bound;

typedef struct estimate {
    int world;
    int nstmts;
    double work;     /* sum of the sizes of every value computed, matmul as its products */
    double largest;  /* largest tensor bound seen */
    double sent;     /* largest message sent so far: what a later recv can get */
    int nnames;
    struct {
        const char *name;
        bound b;
    } names[ORACLE_MAX_NAMES];
} estimate;

static const bound unknown = {INFINITY, INFINITY};

static bool is(const cg_expr *e, const char *name) { return strcmp(e->name, name) == 0; }

static bound eval(estimate *E, const cg_expr *e);

static bound lookup(const estimate *E, const char *name)
{
    for (int i = 0; i < E->nnames; i++)
        if (strcmp(E->names[i].name, name) == 0)
            return E->names[i].b;
    return unknown;
}

/* A name may be bound on several ranks or rebound: keep the largest bound. */
static void bind(estimate *E, const char *name, bound b)
{
    for (int i = 0; i < E->nnames; i++)
        if (strcmp(E->names[i].name, name) == 0) {
            E->names[i].b.numel = fmax(E->names[i].b.numel, b.numel);
            E->names[i].b.mag = fmax(E->names[i].b.mag, b.mag);
            return;
        }
    if (E->nnames == ORACLE_MAX_NAMES) {
        E->largest = INFINITY; /* too many to track: skip the oracle */
        return;
    }
    E->names[E->nnames].name = name;
    E->names[E->nnames++].b = b;
}

static int npositional(const cg_expr *e)
{
    int n = 0;
    for (int i = 0; i < e->nargs; i++)
        n += !(e->kwnames && e->kwnames[i]);
    return n;
}

static bound binary(const cg_expr *e, bound a, bound b, estimate *E)
{
    bound r = {fmax(a.numel, b.numel), INFINITY};
    switch (e->op) {
    case CG_OP_ADD: case CG_OP_SUB: r.mag = a.mag + b.mag; break;
    case CG_OP_MUL: r.mag = a.mag * b.mag; break;
    case CG_OP_MOD: r.mag = b.mag; break; /* |a % b| < |b| whichever sign convention */
    case CG_OP_DIV: /* only divisors known to be >= 1 in magnitude */
        if (e->args[1]->kind == CG_E_WORLD)
            r.mag = a.mag;
        else if (e->args[1]->kind == CG_E_NUM && fabs(e->args[1]->num) >= 1.0)
            r.mag = a.mag / fabs(e->args[1]->num);
        break;
    case CG_OP_MATMUL:
        r.numel = a.numel * b.numel;
        E->work += a.numel * b.numel;
        break;
    case CG_OP_POW: break;
    default: r.mag = 1.0; break; /* comparisons and logic give 0 or 1 */
    }
    return r;
}

static bound call(estimate *E, const cg_expr *e, const bound *args)
{
    int npos = npositional(e);
    bound r = {args[0].numel, INFINITY};
    if (is(e, "ones") || is(e, "zeros") || is(e, "rand") || is(e, "randn") || is(e, "full")) {
        int first = is(e, "full");
        r.numel = 1.0;
        for (int i = first; i < npos; i++)
            r.numel *= args[i].mag;
        r.mag = is(e, "full") ? args[0].mag : is(e, "randn") ? INFINITY : 1.0;
    } else if (is(e, "arange")) {
        r = (bound){args[0].mag, args[0].mag};
    } else if (is(e, "eye")) {
        r = (bound){args[0].mag * (npos > 1 ? fmax(args[0].mag, args[1].mag) : args[0].mag), 1.0};
    } else if (is(e, "cat")) {
        r = (bound){0.0, 0.0};
        for (int i = 0; i < npos; i++) {
            r.numel += args[i].numel;
            r.mag = fmax(r.mag, args[i].mag);
        }
    } else if (is(e, "matmul")) {
        r.numel = args[0].numel * args[1].numel;
        E->work += r.numel;
    } else if (is(e, "pow")) {
        r.numel = fmax(args[0].numel, args[1].numel);
    } else if (is(e, "all_gather") || is(e, "gather") || is(e, "all_to_all")) {
        /* all_to_all too: rank r's part of n rows is up to one row per rank */
        r = (bound){args[0].numel * E->world, args[0].mag};
    } else if (is(e, "recv")) {
        r = (bound){E->sent, INFINITY};
    } else if (is(e, "send")) {
        E->sent = fmax(E->sent, args[0].numel);
    } else if (is(e, "param") || is(e, "relu") || is(e, "abs") || is(e, "neg") || is(e, "clone") ||
               is(e, "detach") || is(e, "transpose") || is(e, "reshape") || is(e, "slice") ||
               is(e, "broadcast") || is(e, "scatter")) {
        r.mag = args[0].mag; /* moves or signs values, never grows them */
    } else if (is(e, "mean")) {
        r.mag = args[0].mag;
    } else if (is(e, "backward") || is(e, "zero_grad")) {
        r = (bound){0.0, 0.0};
    } else if (!(is(e, "exp") || is(e, "log") || is(e, "tanh") || is(e, "sum") || is(e, "logsumexp") ||
                 is(e, "log_softmax") || is(e, "all_reduce") || is(e, "reduce_scatter") ||
                 is(e, "reduce"))) {
        r = unknown; /* a function this bound does not know: assume the worst */
    }
    return r;
}

static bound eval(estimate *E, const cg_expr *e)
{
    bound r = unknown;
    if (!e)
        return (bound){0.0, 0.0};
    switch (e->kind) {
    case CG_E_NUM: r = (bound){1.0, fabs(e->num)}; break;
    case CG_E_RANK: case CG_E_WORLD: r = (bound){1.0, E->world}; break;
    case CG_E_NAME: r = lookup(E, e->name); break;
    case CG_E_WORD: r = (bound){0.0, 0.0}; break;
    case CG_E_LIST:
        r = (bound){e->nargs ? 0.0 : 1.0, 0.0};
        for (int i = 0; i < e->nargs; i++) {
            bound b = eval(E, e->args[i]);
            r.numel += b.numel;
            r.mag = fmax(r.mag, b.mag);
        }
        break;
    case CG_E_UNARY:
        r = eval(E, e->args[0]);
        if (e->op == CG_OP_NOT)
            r.mag = 1.0;
        break;
    case CG_E_BINARY: {
        bound a = eval(E, e->args[0]), b = eval(E, e->args[1]);
        r = binary(e, a, b, E);
        break;
    }
    case CG_E_TERNARY: {
        eval(E, e->args[0]);
        bound a = eval(E, e->args[1]), b = eval(E, e->args[2]);
        r = (bound){fmax(a.numel, b.numel), fmax(a.mag, b.mag)};
        break;
    }
    case CG_E_INDEX:
        for (int i = 1; i < e->nargs; i++)
            eval(E, e->args[i]);
        r = eval(E, e->args[0]);
        break;
    case CG_E_CALL: {
        bound args[65]; /* the parser allows at most 64 arguments */
        if (e->nargs > 64)
            return unknown;
        for (int i = 0; i < e->nargs; i++)
            args[i] = eval(E, e->args[i]);
        if (e->nargs == 0)
            args[0] = (bound){1.0, 0.0};
        r = call(E, e, args);
        break;
    }
    }
    E->work += r.numel;
    E->largest = fmax(E->largest, r.numel);
    return r;
}

static void walk(estimate *E, cg_stmt *const *stmts, int n)
{
    for (int i = 0; i < n; i++) {
        const cg_stmt *s = stmts[i];
        E->nstmts++;
        for (int k = 0; k < s->nranks; k++)
            eval(E, s->ranks[k]);
        bound b = eval(E, s->expr);
        for (int k = 0; k < s->nnames; k++)
            bind(E, s->names[k], b);
        walk(E, s->body, s->nbody);
    }
}

static bool small_enough(const cg_case *c, size_t size)
{
    if (size >= ORACLE_MAX_INPUT || c->nworlds < 1 || c->worlds[0] < 1 ||
        c->worlds[0] > ORACLE_MAX_WORLD)
        return false;
    estimate *E = calloc(1, sizeof *E);
    if (!E)
        return false;
    E->world = c->worlds[0];
    walk(E, c->stmts, c->nstmts);
    bool ok = E->nstmts <= ORACLE_MAX_STMTS && E->largest <= ORACLE_MAX_NUMEL &&
              E->work <= ORACLE_MAX_WORK;
    free(E);
    return ok;
}

/* ---- the target ----------------------------------------------------------- */

/* The case as text, or NULL when out of memory. */
static char *print_case(const cg_case *c, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    cg_case_print(f, c);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The printer (ir_print.c) walks the whole tree; its text must parse back to a
 * case that prints the same. */
static void check_roundtrip(const cg_case *c)
{
    size_t len = 0, len2 = 0;
    char *text = print_case(c, &len);
    if (!text)
        return;
    cg_status st = CG_STATUS_OK;
    cg_case *again = cg_parse_case("fuzz.case", text, len, &st);
    if (!again) {
        fprintf(stderr, "the printed case does not parse: %s\n%s", st.msg, text);
        abort();
    }
    char *text2 = print_case(again, &len2);
    if (text2 && (len != len2 || memcmp(text, text2, len) != 0)) {
        fprintf(stderr, "printing the reparsed case differs:\n%s---\n%s", text, text2);
        abort();
    }
    free(text2);
    cg_case_free(again);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cg_status st = CG_STATUS_OK;
    cg_case *c = cg_parse_case("fuzz.case", (const char *)data, size, &st);
    if (!c) {
        /* every message says where: "fuzz.case:LINE:COL: expected ..." */
        if (strncmp(st.msg, "fuzz.case:", 10) != 0)
            abort();
        return 0;
    }
    check_roundtrip(c);
    if (small_enough(c, size))
        cg_oracle_free(cg_oracle_run(c, c->worlds[0], false));
    cg_case_free(c);
    return 0;
}
