/* json_schema.c — see json_schema.h. */
#include "json_schema.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { PATH_CAP = 1024, MAX_REF_DEPTH = 64 };

typedef struct vctx {
    const cJSON *root;
    char *err;
    size_t errlen;
    int ref_depth; /* $refs followed on the way here: a cycle ends the walk */
} vctx;

static int say(vctx *v, int rc, const char *path, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* err = "PATH: message"; returns rc. */
static int say(vctx *v, int rc, const char *path, const char *fmt, ...)
{
    int n = snprintf(v->err, v->errlen, "%s: ", path[0] ? path : "(root)");
    if (n >= 0 && (size_t)n < v->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v->err + n, v->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* Append "/key" (escaped as a JSON pointer: ~ is ~0, / is ~1) to path at len. */
static size_t push_key(char *path, size_t len, const char *key)
{
    if (len + 2 >= PATH_CAP)
        return len;
    path[len++] = '/';
    for (; *key && len + 3 < PATH_CAP; key++) {
        if (*key == '~' || *key == '/') {
            path[len++] = '~';
            path[len++] = *key == '~' ? '0' : '1';
        } else {
            path[len++] = *key;
        }
    }
    path[len] = '\0';
    return len;
}

static size_t push_index(char *path, size_t len, int i)
{
    char key[16];
    snprintf(key, sizeof key, "%d", i);
    return push_key(path, len, key);
}

/* The schema "#/a/b" points at in root, or NULL. */
static const cJSON *resolve(const cJSON *root, const char *ref)
{
    if (strncmp(ref, "#", 1) != 0)
        return NULL;
    const cJSON *at = root;
    for (const char *p = ref + 1; at && *p == '/';) {
        const char *end = strchr(p + 1, '/');
        size_t n = end ? (size_t)(end - p - 1) : strlen(p + 1);
        char key[256];
        if (n >= sizeof key || memchr(p + 1, '~', n))
            return NULL; /* escapes are not needed by our schema: refuse rather than guess */
        memcpy(key, p + 1, n);
        key[n] = '\0';
        at = cJSON_GetObjectItemCaseSensitive(at, key);
        p += n + 1;
    }
    return at;
}

/* ---- the schema itself --------------------------------------------------- */

static bool is_type_name(const char *s)
{
    static const char *const names[] = {"object", "array", "string", "number", "integer", "boolean", "null"};
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0)
            return true;
    return false;
}

static int check_node(vctx *v, const cJSON *s, char *path, size_t len);

static int check_members(vctx *v, const cJSON *obj, char *path, size_t len)
{
    if (!cJSON_IsObject(obj))
        return say(v, -1, path, "expected an object of schemas");
    const cJSON *m;
    cJSON_ArrayForEach(m, obj)
    {
        int rc = check_node(v, m, path, push_key(path, len, m->string));
        path[len] = '\0';
        if (rc)
            return rc;
    }
    return 0;
}

static int check_keyword(vctx *v, const cJSON *k, char *path, size_t len)
{
    const char *name = k->string;
    if (!strcmp(name, "$schema") || !strcmp(name, "$id") || !strcmp(name, "$comment") || !strcmp(name, "title") ||
        !strcmp(name, "description"))
        return cJSON_IsString(k) ? 0 : say(v, -1, path, "'%s' must be a string", name);
    if (!strcmp(name, "$defs") || !strcmp(name, "properties"))
        return check_members(v, k, path, len);
    if (!strcmp(name, "additionalProperties") || !strcmp(name, "items"))
        return check_node(v, k, path, len);
    if (!strcmp(name, "type")) {
        if (cJSON_IsString(k))
            return is_type_name(k->valuestring) ? 0 : say(v, -1, path, "unknown type '%s'", k->valuestring);
        const cJSON *t;
        cJSON_ArrayForEach(t, (cJSON_IsArray(k) ? k : NULL))
        {
            if (!is_type_name(cJSON_IsString(t) ? t->valuestring : NULL))
                return say(v, -1, path, "'type' lists something that is not a type name");
        }
        return cJSON_IsArray(k) ? 0 : say(v, -1, path, "'type' must be a string or an array");
    }
    if (!strcmp(name, "enum"))
        return cJSON_IsArray(k) ? 0 : say(v, -1, path, "'enum' must be an array");
    if (!strcmp(name, "const"))
        return 0;
    if (!strcmp(name, "minimum") || !strcmp(name, "maximum"))
        return cJSON_IsNumber(k) ? 0 : say(v, -1, path, "'%s' must be a number", name);
    if (!strcmp(name, "maxItems"))
        return cJSON_IsNumber(k) && k->valuedouble >= 0 ? 0 : say(v, -1, path, "'maxItems' must be >= 0");
    if (!strcmp(name, "required")) {
        const cJSON *r;
        cJSON_ArrayForEach(r, (cJSON_IsArray(k) ? k : NULL))
        {
            if (!cJSON_IsString(r))
                return say(v, -1, path, "'required' lists something that is not a string");
        }
        return cJSON_IsArray(k) ? 0 : say(v, -1, path, "'required' must be an array");
    }
    if (!strcmp(name, "pattern")) {
        regex_t re;
        if (!cJSON_IsString(k) || regcomp(&re, k->valuestring, REG_EXTENDED | REG_NOSUB) != 0)
            return say(v, -1, path, "'pattern' is not a POSIX extended regular expression");
        regfree(&re);
        return 0;
    }
    if (!strcmp(name, "$ref"))
        return cJSON_IsString(k) && resolve(v->root, k->valuestring)
                   ? 0
                   : say(v, -1, path, "'$ref' %s leads nowhere", cJSON_IsString(k) ? k->valuestring : "(not a string)");
    return say(v, -1, path, "unsupported keyword '%s'", name);
}

static int check_node(vctx *v, const cJSON *s, char *path, size_t len)
{
    if (cJSON_IsBool(s))
        return 0;
    if (!cJSON_IsObject(s))
        return say(v, -1, path, "a schema must be an object or a boolean");
    const cJSON *k;
    cJSON_ArrayForEach(k, s)
    {
        int rc = check_keyword(v, k, path, push_key(path, len, k->string));
        path[len] = '\0';
        if (rc)
            return rc;
    }
    return 0;
}

int cg_schema_check(const cJSON *schema, char *err, size_t errlen)
{
    vctx v = {schema, err, errlen, 0};
    char path[PATH_CAP] = "#";
    return check_node(&v, schema, path, 1);
}

/* ---- instances ----------------------------------------------------------- */

static bool has_type(const cJSON *x, const char *t)
{
    if (!strcmp(t, "object")) return cJSON_IsObject(x);
    if (!strcmp(t, "array")) return cJSON_IsArray(x);
    if (!strcmp(t, "string")) return cJSON_IsString(x);
    if (!strcmp(t, "number")) return cJSON_IsNumber(x);
    if (!strcmp(t, "integer")) return cJSON_IsNumber(x) && isfinite(x->valuedouble) && x->valuedouble == floor(x->valuedouble);
    if (!strcmp(t, "boolean")) return cJSON_IsBool(x);
    return !strcmp(t, "null") && cJSON_IsNull(x);
}

/* A short printing of x for messages. */
static void show(const cJSON *x, char *buf, size_t len)
{
    char *text = cJSON_PrintUnformatted(x);
    snprintf(buf, len, "%s", text ? text : "?");
    if (text && strlen(text) >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
    cJSON_free(text);
}

static int validate(vctx *v, const cJSON *s, const cJSON *x, char *path, size_t len);

static int validate_object(vctx *v, const cJSON *s, const cJSON *x, char *path, size_t len)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "required"))
    {
        if (!cJSON_GetObjectItemCaseSensitive(x, r->valuestring))
            return say(v, 1, path, "required property '%s' is missing", r->valuestring);
    }
    const cJSON *m;
    cJSON_ArrayForEach(m, x)
    {
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(props, m->string);
        size_t at = push_key(path, len, m->string);
        int rc = 0;
        if (sub)
            rc = validate(v, sub, m, path, at);
        else if (cJSON_IsFalse(extra))
            rc = say(v, 1, path, "property not allowed here (additionalProperties is false)");
        else if (extra)
            rc = validate(v, extra, m, path, at);
        path[len] = '\0';
        if (rc)
            return rc;
    }
    return 0;
}

static int validate_array(vctx *v, const cJSON *s, const cJSON *x, char *path, size_t len)
{
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(s, "maxItems");
    if (max && cJSON_GetArraySize(x) > max->valuedouble)
        return say(v, 1, path, "%d items, more than maxItems %g", cJSON_GetArraySize(x), max->valuedouble);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, (items ? x : NULL))
    {
        int rc = validate(v, items, e, path, push_index(path, len, i++));
        path[len] = '\0';
        if (rc)
            return rc;
    }
    return 0;
}

static int validate_scalar(vctx *v, const cJSON *s, const cJSON *x, char *path)
{
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(s, "minimum");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(s, "maximum");
    if (cJSON_IsNumber(x) && min && x->valuedouble < min->valuedouble)
        return say(v, 1, path, "%.17g is less than the minimum %.17g", x->valuedouble, min->valuedouble);
    if (cJSON_IsNumber(x) && max && x->valuedouble > max->valuedouble)
        return say(v, 1, path, "%.17g is more than the maximum %.17g", x->valuedouble, max->valuedouble);
    const cJSON *pattern = cJSON_GetObjectItemCaseSensitive(s, "pattern");
    if (cJSON_IsString(x) && pattern) {
        regex_t re;
        if (regcomp(&re, pattern->valuestring, REG_EXTENDED | REG_NOSUB) != 0)
            return say(v, -1, path, "the schema's pattern does not compile");
        int miss = regexec(&re, x->valuestring, 0, NULL, 0);
        regfree(&re);
        if (miss)
            return say(v, 1, path, "\"%s\" does not match the pattern %s", x->valuestring, pattern->valuestring);
    }
    return 0;
}

static int validate(vctx *v, const cJSON *s, const cJSON *x, char *path, size_t len)
{
    char shown[96];
    if (cJSON_IsBool(s))
        return cJSON_IsTrue(s) ? 0 : say(v, 1, path, "nothing is allowed here");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
    if (ref) {
        const cJSON *target = resolve(v->root, ref->valuestring);
        if (!target || v->ref_depth >= MAX_REF_DEPTH)
            return say(v, -1, path, "$ref %s leads nowhere (or loops)", ref->valuestring);
        v->ref_depth++;
        int rc = validate(v, target, x, path, len);
        v->ref_depth--;
        if (rc)
            return rc;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(s, "type");
    if (type) {
        bool ok = cJSON_IsString(type) && has_type(x, type->valuestring);
        const cJSON *t;
        cJSON_ArrayForEach(t, (cJSON_IsArray(type) ? type : NULL))
        {
            ok |= has_type(x, t->valuestring);
        }
        if (!ok) {
            char want[96];
            show(x, shown, sizeof shown);
            show(type, want, sizeof want);
            return say(v, 1, path, "%s is not of type %s", shown, want);
        }
    }
    const cJSON *konst = cJSON_GetObjectItemCaseSensitive(s, "const");
    if (konst && !cJSON_Compare(konst, x, true)) {
        show(x, shown, sizeof shown);
        return say(v, 1, path, "%s is not the constant the schema requires", shown);
    }
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(s, "enum");
    if (en) {
        bool found = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, en)
        {
            found |= cJSON_Compare(e, x, true);
        }
        if (!found) {
            show(x, shown, sizeof shown);
            return say(v, 1, path, "%s is not one of the allowed values", shown);
        }
    }
    if (cJSON_IsObject(x))
        return validate_object(v, s, x, path, len);
    if (cJSON_IsArray(x))
        return validate_array(v, s, x, path, len);
    return validate_scalar(v, s, x, path);
}

int cg_schema_validate(const cJSON *schema, const cJSON *instance, char *err, size_t errlen)
{
    if (cg_schema_check(schema, err, errlen) != 0)
        return -1;
    vctx v = {schema, err, errlen, 0};
    char path[PATH_CAP] = "";
    return validate(&v, schema, instance, path, 0);
}
