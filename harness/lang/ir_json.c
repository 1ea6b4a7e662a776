/* ir_json.c — a case's IR as JSON (ir_json.h). The walk that writes the
 * program numbers its communication calls in the order the interpreter
 * evaluates them (interp.c, interp_expr.c, interp_call.c): children first,
 * left to right, a ternary's condition then both branches, a statement's
 * arguments before the statement itself. */
#include "ir_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_words.h"
#include "op_table.h"

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

cJSON *cg_ir_case_json(const cg_case *cs)
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
    if (cg_jax_spelling_set(&cs->jax)) { /* {"all_gather": "invarying", "loss": "varying", ...} */
        cJSON *jax = cJSON_CreateObject();
        const char *key, *word;
        for (int k = 0; jax && (word = cg_jax_spelling_word(&cs->jax, k, &key)); k++)
            add_str(&w, jax, key, word);
        add(&w, o, "jax", jax);
    }
    add(&w, o, "program", stmts_json(&w, cs->stmts, cs->nstmts));
    add(&w, o, "ncomm", cJSON_CreateNumber(w.seq));
    if (w.oom) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* item into o under key; false (item freed) when either is out of memory. */
static bool put(cJSON *o, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(o, key, item))
        return true;
    cJSON_Delete(item);
    return false;
}

/* The op table (op_table.h) by name: what each tensor function takes, how it
 * is called, and the properties a generator of programs reads. An
 * interpreter outside the tool checks that it has an entry for every row. */
cJSON *cg_ir_ops_json(void)
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

