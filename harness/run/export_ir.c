/* export_ir.c — the IR as JSON (export_ir.h). The walk that writes the
 * program numbers its communication calls in the order the interpreter
 * evaluates them (interp.c, interp_expr.c, interp_call.c): children first,
 * left to right, a ternary's condition then both branches, a statement's
 * arguments before the statement itself. */
#include "export_ir.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_set.h"
#include "cli.h"
#include "comm.h"
#include "op_table.h"
#include "report_json.h"

/* Where the walk is: the next communication call's seq; the statement's
 * first assigned name and its rand/randn calls so far, which key its random
 * inputs (interp_call.c: "NAME#DRAW", "stmt#DRAW" outside assignments);
 * `oom` once any cJSON allocation failed (the caller then throws the whole
 * tree away). */
typedef struct walk {
    int seq;
    const char *bind_name;
    int draws;
    bool oom;
} walk;

static const char *const kind_names[] = {
    [CG_E_NUM] = "num", [CG_E_RANK] = "rank", [CG_E_WORLD] = "world", [CG_E_NAME] = "name",
    [CG_E_LIST] = "list", [CG_E_UNARY] = "unary", [CG_E_BINARY] = "binary",
    [CG_E_TERNARY] = "ternary", [CG_E_CALL] = "call", [CG_E_INDEX] = "index", [CG_E_WORD] = "word",
};

static const char *const op_names[] = {
    [CG_OP_ADD] = "+", [CG_OP_SUB] = "-", [CG_OP_MUL] = "*", [CG_OP_DIV] = "/", [CG_OP_POW] = "**",
    [CG_OP_MATMUL] = "@", [CG_OP_EQ] = "==", [CG_OP_NE] = "!=", [CG_OP_LT] = "<", [CG_OP_LE] = "<=",
    [CG_OP_GT] = ">", [CG_OP_GE] = ">=", [CG_OP_AND] = "&&", [CG_OP_OR] = "||", [CG_OP_MOD] = "%",
    [CG_OP_NEG] = "-", [CG_OP_NOT] = "!",
};

/* A JSON number, or the strings "inf", "-inf", "nan" JSON has no numbers for. */
static cJSON *number(double v)
{
    if (isfinite(v))
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static void add(walk *w, cJSON *obj, const char *key, cJSON *item)
{
    if (!item || !obj || !cJSON_AddItemToObject(obj, key, item)) {
        w->oom = true;
        cJSON_Delete(item);
    }
}

static void add_str(walk *w, cJSON *obj, const char *key, const char *s)
{
    add(w, obj, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static cJSON *position(cg_srcpos pos)
{
    int at[2] = {pos.line, pos.col};
    return cJSON_CreateIntArray(at, 2);
}

static bool is_comm_call(const cg_expr *e)
{
    return e->kind == CG_E_CALL && cg_coll_from_name(e->name) >= 0 && strcmp(e->name, "send") != 0;
}

static cJSON *expr_json(walk *w, const cg_expr *e);

static void push(walk *w, cJSON *array, cJSON *item)
{
    if (!item || !array || !cJSON_AddItemToArray(array, item)) {
        w->oom = true;
        cJSON_Delete(item);
    }
}

/* A call's arguments: positional ones in "args", keyword ones in "kwargs"
 * (the parser keeps positional before keyword, so the order is the C's). */
static void call_args(walk *w, cJSON *o, const cg_expr *e)
{
    cJSON *args = cJSON_CreateArray(), *kw = cJSON_CreateObject();
    for (int i = 0; i < e->nargs; i++) {
        cJSON *a = expr_json(w, e->args[i]);
        if (e->kwnames && e->kwnames[i])
            add(w, kw, e->kwnames[i], a);
        else
            push(w, args, a);
    }
    add(w, o, "args", args);
    add(w, o, "kwargs", kw);
}

static cJSON *expr_json(walk *w, const cg_expr *e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        w->oom = true;
        return NULL;
    }
    add_str(w, o, "kind", kind_names[e->kind]);
    add(w, o, "at", position(e->pos));
    switch (e->kind) {
    case CG_E_NUM: add(w, o, "value", number(e->num)); break;
    case CG_E_NAME:
    case CG_E_WORD: add_str(w, o, "name", e->name); break;
    case CG_E_UNARY:
    case CG_E_BINARY:
        add_str(w, o, "op", op_names[e->op]);
        __attribute__((fallthrough)); /* then the operands, as for the kinds below */
    case CG_E_LIST:
    case CG_E_TERNARY:
    case CG_E_INDEX: {
        cJSON *args = cJSON_CreateArray();
        for (int i = 0; i < e->nargs; i++)
            push(w, args, e->args[i] ? expr_json(w, e->args[i]) : cJSON_CreateNull());
        add(w, o, e->kind == CG_E_LIST ? "items" : "args", args);
        if (e->kind == CG_E_INDEX)
            add(w, o, "slice", cJSON_CreateBool(e->is_slice));
        break;
    }
    case CG_E_CALL:
        add_str(w, o, "name", e->name);
        call_args(w, o, e);
        if (is_comm_call(e)) /* after its arguments, as the interpreter counts */
            add(w, o, "seq", cJSON_CreateNumber(w->seq++));
        if (strcmp(e->name, "rand") == 0 || strcmp(e->name, "randn") == 0) {
            char key[160];
            snprintf(key, sizeof key, "%s#%d", w->bind_name[0] ? w->bind_name : "stmt", w->draws++);
            add_str(w, o, "rng_key", key);
        }
        break;
    case CG_E_RANK:
    case CG_E_WORLD: break;
    }
    return o;
}

static cJSON *stmts_json(walk *w, cg_stmt *const *stmts, int n);

static cJSON *stmt_json(walk *w, const cg_stmt *st)
{
    static const char *const names[] = {[CG_S_ASSIGN] = "assign", [CG_S_CALL] = "call", [CG_S_ON] = "on"};
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        w->oom = true;
        return NULL;
    }
    w->bind_name = st->kind == CG_S_ASSIGN ? st->names[0] : "";
    w->draws = 0;
    add_str(w, o, "kind", names[st->kind]);
    add(w, o, "at", position(st->pos));
    add(w, o, "index", cJSON_CreateNumber(st->index));
    if (st->kind == CG_S_ASSIGN) {
        add(w, o, "names", cJSON_CreateStringArray((const char *const *)st->names, st->nnames));
        add(w, o, "expr", expr_json(w, st->expr));
    } else if (st->kind == CG_S_CALL) {
        /* backward(t), zero_grad(), send(t, dst): the statement's call node */
        const cg_expr *e = st->expr;
        cJSON *call = cJSON_CreateObject();
        if (call) {
            add_str(w, call, "kind", "call");
            add(w, call, "at", position(e->pos));
            add_str(w, call, "name", e->name);
            call_args(w, call, e);
            if (strcmp(e->name, "send") == 0)
                add(w, call, "seq", cJSON_CreateNumber(w->seq++));
        }
        add(w, o, "expr", call);
    } else {
        cJSON *ranks = cJSON_CreateArray();
        for (int i = 0; i < st->nranks; i++)
            push(w, ranks, expr_json(w, st->ranks[i]));
        add(w, o, "ranks", ranks);
        add(w, o, "body", stmts_json(w, st->body, st->nbody));
    }
    return o;
}

static cJSON *stmts_json(walk *w, cg_stmt *const *stmts, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        push(w, a, stmt_json(w, stmts[i]));
    return a;
}

/* The plan: for every communication call, every rank's input shape. */
static cJSON *plan_json(walk *w, const cg_oracle *o)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < o->nevents; i++) {
        const cg_plan_event *ev = &o->events[i];
        cJSON *e = cJSON_CreateObject(), *shapes = cJSON_CreateArray();
        add(w, e, "seq", cJSON_CreateNumber(ev->coll.seq));
        add_str(w, e, "kind", cg_coll_name(ev->coll.kind));
        add(w, e, "rank", cJSON_CreateNumber(ev->rank));
        add(w, e, "tag", cJSON_CreateNumber(ev->tag));
        /* a call on a process group is a call of a world of its size: its
         * shapes and splits are indexed by group rank, its members say whose */
        int n = ev->coll.nmembers ? ev->coll.nmembers : o->world;
        if (ev->coll.nmembers)
            add(w, e, "members", cJSON_CreateIntArray(ev->members, n));
        for (int r = 0; r < n; r++) {
            int dims[CG_MAX_DIMS];
            for (int d = 0; d < ev->ndim[r]; d++)
                dims[d] = (int)ev->shape[r][d];
            push(w, shapes, cJSON_CreateIntArray(dims, ev->ndim[r]));
        }
        add(w, e, "shapes", shapes);
        if (ev->splits) { /* explicit row splits: row j is rank j's, entry r its block r */
            cJSON *rows = cJSON_CreateArray();
            for (int j = 0; j < n; j++) {
                int row[CG_MAX_WORLD];
                for (int r = 0; r < n; r++)
                    row[r] = (int)ev->splits[(size_t)j * (size_t)n + (size_t)r];
                push(w, rows, cJSON_CreateIntArray(row, n));
            }
            add(w, e, "splits", rows);
        }
        push(w, a, e);
    }
    return a;
}

cJSON *cg_export_case(const cg_case *cs, const cg_oracle *plan)
{
    walk w = {0, "", 0, false};
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", cs->seed);
    add_str(&w, o, "name", cs->name);
    add_str(&w, o, "file", cs->file);
    add_str(&w, o, "source", cs->source);
    add(&w, o, "worlds", cJSON_CreateIntArray(cs->worlds, cs->nworlds));
    add_str(&w, o, "dtype", cg_dtype_name(cs->dtype));
    add_str(&w, o, "seed", seed); /* a string: 64-bit seeds do not fit a JSON double */
    add(&w, o, "rtol", number(cs->rtol));
    add(&w, o, "atol", number(cs->atol));
    add(&w, o, "program", stmts_json(&w, cs->stmts, cs->nstmts));
    add(&w, o, "ncomm", cJSON_CreateNumber(w.seq));
    if (plan)
        add(&w, o, "plan", plan_json(&w, plan));
    if (w.oom) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The positional index of a collective's keyword argument, or null. */
static cJSON *keyword_at(cg_coll_kind k, const char *kw)
{
    int at = cg_coll_keyword_index(k, kw);
    return at >= 0 ? cJSON_CreateNumber(at) : cJSON_CreateNull();
}

/* item into o under key; false (item freed) when either is out of memory. */
static bool put(cJSON *o, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(o, key, item))
        return true;
    cJSON_Delete(item);
    return false;
}

/* The table of collectives as an interpreter outside the tool needs it:
 * where each one's op and root are among its arguments, whether it pairs two
 * ranks and whether only the root's output is meaningful. */
static cJSON *collectives_json(void)
{
    cJSON *t = cJSON_CreateObject();
    for (int k = 0; t && k < CG_C_COUNT; k++) {
        const cg_collective *d = cg_collective_of((cg_coll_kind)k);
        cJSON *c = cJSON_CreateObject();
        if (!put(t, cg_coll_name(d->kind), c) || !put(c, "op", keyword_at(d->kind, "op")) ||
            !put(c, "root", keyword_at(d->kind, "root")) || !put(c, "p2p", cJSON_CreateBool(d->p2p)) ||
            !put(c, "root_only_output", cJSON_CreateBool(d->root_only_output))) {
            cJSON_Delete(t);
            return NULL;
        }
    }
    return t;
}

/* The op table (op_table.h) by name: what each tensor function takes, how it
 * is called, and the properties a generator of programs reads. An
 * interpreter outside the tool checks that it has an entry for every row. */
static cJSON *ops_json(void)
{
    cJSON *t = cJSON_CreateObject();
    for (int k = 0; t && k < CG_FN_COUNT; k++) {
        const cg_op_info *op = cg_op_info_of((cg_fn_id)k);
        cJSON *o = cJSON_CreateObject();
        if (!put(t, op->name, o) || !put(o, "class", cJSON_CreateString(cg_op_class_name(op->cls))) ||
            !put(o, "min_args", cJSON_CreateNumber(op->min_args)) ||
            !put(o, "max_args", cJSON_CreateNumber(op->max_args)) ||
            !put(o, "keyword", op->keyword ? cJSON_CreateString(op->keyword) : cJSON_CreateNull()) ||
            !put(o, "shape", cJSON_CreateString(cg_op_shape_name(op->shape))) ||
            !put(o, "domain", cJSON_CreateString(cg_op_domain_name(op->domain))) ||
            !put(o, "diff", cJSON_CreateString(cg_op_diff_name(op->diff)))) {
            cJSON_Delete(t);
            return NULL;
        }
    }
    return t;
}

cJSON *cg_export_document(int world)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *tool = o ? cJSON_AddObjectToObject(o, "tool") : NULL, *colls = collectives_json();
    if (!tool || !colls || !cJSON_AddStringToObject(o, "schema", CG_IR_SCHEMA) ||
        !cJSON_AddStringToObject(tool, "name", "collgrad-check") ||
        !cJSON_AddStringToObject(tool, "version", CG_VERSION) ||
        !(world > 0 ? cJSON_AddNumberToObject(o, "world", world) : cJSON_AddNullToObject(o, "world")) ||
        !cJSON_AddArrayToObject(o, "cases")) {
        cJSON_Delete(colls);
        cJSON_Delete(o);
        return NULL;
    }
    if (!put(o, "collectives", colls) || !put(o, "ops", ops_json())) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- the subcommand ------------------------------------------------------- */

static int export_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "collgrad-check export-ir: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\nusage: collgrad-check export-ir [--world N] [--output FILE] [CASE_FILE|DIR]...\n");
    return CG_EXIT_USAGE;
}

static bool lists_world(const cg_case *cs, int world)
{
    for (int i = 0; i < cs->nworlds; i++)
        if (cs->worlds[i] == world)
            return true;
    return false;
}

/* Every case (that lists `world`, when one is given) into doc. 0, or an exit
 * status after printing why. */
static int export_set(cJSON *doc, const cg_case_set *set, int world)
{
    cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    for (int i = 0; i < set->n; i++) {
        const cg_case *cs = set->cases[i];
        if (world > 0 && !lists_world(cs, world))
            continue;
        cg_oracle *plan = world > 0 ? cg_oracle_run(cs, world, false) : NULL;
        if (world > 0 && (!plan || plan->st.code != 0)) {
            fprintf(stderr, "collgrad-check export-ir: %s\n", plan ? plan->st.msg : "out of memory");
            int rc = plan ? plan->st.code : CG_EXIT_INFRA;
            cg_oracle_free(plan);
            return rc;
        }
        cJSON *c = cg_export_case(cs, plan);
        cg_oracle_free(plan);
        if (!c || !cJSON_AddItemToArray(cases, c)) {
            cJSON_Delete(c);
            fprintf(stderr, "collgrad-check export-ir: out of memory\n");
            return CG_EXIT_INFRA;
        }
    }
    return 0;
}

int cg_export_ir_main(int argc, char **argv)
{
    int world = 0, npaths = 0;
    const char *output = NULL;
    char **paths = calloc((size_t)argc + 1, sizeof *paths);
    if (!paths)
        return CG_EXIT_INFRA;
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        bool valued = strcmp(argv[i], "--world") == 0 || strcmp(argv[i], "--output") == 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: collgrad-check export-ir [--world N] [--output FILE] [CASE_FILE|DIR]...\n"
                   "Writes each case's IR as JSON (python/schema), for the PyTorch runner and other tools.\n");
            free(paths);
            return CG_EXIT_OK;
        } else if (valued && i + 1 >= argc) {
            rc = export_usage("expected a value after %s", argv[i]);
        } else if (strcmp(argv[i], "--world") == 0) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*argv[i] == '\0' || *end || v < 1 || v > CG_MAX_WORLD)
                rc = export_usage("expected a world size in 1..64 after --world, got '%s'", argv[i]);
            world = (int)v;
        } else if (strcmp(argv[i], "--output") == 0) {
            output = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            rc = export_usage("expected --world, --output or a case path, got '%s'", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    cg_status st = CG_STATUS_OK;
    if (rc == 0 && output && cg_report_target_check("--output", output, &st) != 0) {
        fprintf(stderr, "collgrad-check export-ir: %s\n", st.msg); /* before any case is read */
        rc = CG_EXIT_USAGE;
    }
    cg_case_set set = {0};
    if (rc == 0)
        rc = cg_case_set_load(&set, paths, npaths, NULL);
    cJSON *doc = rc == 0 ? cg_export_document(world) : NULL;
    if (rc == 0 && !doc)
        rc = CG_EXIT_INFRA;
    if (rc == 0)
        rc = export_set(doc, &set, world);
    char *text = rc == 0 ? cJSON_Print(doc) : NULL;
    if (rc == 0 && !text)
        rc = CG_EXIT_INFRA;
    if (rc == 0 && output) {
        if (cg_report_output_write(output, text, &st) != 0) {
            fprintf(stderr, "collgrad-check export-ir: %s\n", st.msg);
            rc = CG_EXIT_INFRA;
        }
    } else if (rc == 0 && (fputs(text, stdout) < 0 || fputc('\n', stdout) < 0 || fflush(stdout) != 0)) {
        fprintf(stderr, "collgrad-check export-ir: cannot write to standard output\n");
        rc = CG_EXIT_INFRA;
    }
    cJSON_free(text);
    cJSON_Delete(doc);
    cg_case_set_free(&set);
    free(paths);
    return rc;
}
