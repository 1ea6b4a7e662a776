/* ir_document.c — the IR document: cases with their plans, and the tables
 * (ir_document.h). */
#include "ir_document.h"

#include <cjson/cJSON.h>

#include "comm.h"

/* item into obj under key; *oom once anything was out of memory (the caller
 * throws the whole tree away). */
static void add(bool *oom, cJSON *obj, const char *key, cJSON *item)
{
    if (!item || !obj || !cJSON_AddItemToObject(obj, key, item)) {
        *oom = true;
        cJSON_Delete(item);
    }
}

static void add_str(bool *oom, cJSON *obj, const char *key, const char *s)
{
    add(oom, obj, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static void push(bool *oom, cJSON *array, cJSON *item)
{
    if (!item || !array || !cJSON_AddItemToArray(array, item)) {
        *oom = true;
        cJSON_Delete(item);
    }
}

/* The plan: for every communication call, every rank's input shape. */
static cJSON *plan_json(const cg_oracle *o)
{
    bool oom = false;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < o->nevents; i++) {
        const cg_plan_event *ev = &o->events[i];
        cJSON *e = cJSON_CreateObject(), *shapes = cJSON_CreateArray();
        add(&oom, e, "seq", cJSON_CreateNumber(ev->coll.seq));
        add_str(&oom, e, "kind", cg_coll_name(ev->coll.kind));
        add(&oom, e, "rank", cJSON_CreateNumber(ev->rank));
        add(&oom, e, "tag", cJSON_CreateNumber(ev->tag));
        /* a call on a process group is a call of a world of its size: its
         * shapes and splits are indexed by group rank, its members say whose */
        int n = ev->coll.nmembers ? ev->coll.nmembers : o->world;
        if (ev->coll.nmembers)
            add(&oom, e, "members", cJSON_CreateIntArray(ev->members, n));
        for (int r = 0; r < n; r++) {
            int dims[CG_MAX_DIMS];
            for (int d = 0; d < ev->ndim[r]; d++)
                dims[d] = (int)ev->shape[r][d];
            push(&oom, shapes, cJSON_CreateIntArray(dims, ev->ndim[r]));
        }
        add(&oom, e, "shapes", shapes);
        if (ev->splits) { /* explicit row splits: row j is rank j's, entry r its block r */
            cJSON *rows = cJSON_CreateArray();
            for (int j = 0; j < n; j++) {
                int row[CG_MAX_WORLD];
                for (int r = 0; r < n; r++)
                    row[r] = (int)ev->splits[(size_t)j * (size_t)n + (size_t)r];
                push(&oom, rows, cJSON_CreateIntArray(row, n));
            }
            add(&oom, e, "splits", rows);
        }
        push(&oom, a, e);
    }
    if (oom) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}


cJSON *cg_export_case(const cg_case *cs, const cg_oracle *plan)
{
    cJSON *o = cg_ir_case_json(cs);
    bool oom = !o;
    if (o && plan)
        add(&oom, o, "plan", plan_json(plan));
    if (oom) {
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
    if (!put(o, "collectives", colls) || !put(o, "ops", cg_ir_ops_json())) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

