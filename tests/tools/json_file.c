/* json_file.c — see json_file.h. */
#include "json_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *cg_json_load_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    while (text) {
        n += fread(text + n, 1, cap - n - 1, f);
        if (n + 1 < cap || ferror(f))
            break;
        char *bigger = realloc(text, cap *= 2);
        if (!bigger)
            free(text);
        text = bigger;
    }
    int bad = !text || ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "%s: cannot read: %s", path, text ? strerror(errno) : "out of memory");
        free(text);
        return NULL;
    }
    text[n] = '\0';
    if (strlen(text) != n) {
        snprintf(err, errlen, "%s: not JSON (a NUL byte at %zu)", path, strlen(text));
        free(text);
        return NULL;
    }
    const char *at = NULL; /* one document, nothing after it but white space */
    cJSON *root = cJSON_ParseWithOpts(text, &at, 1);
    if (!root) {
        long off = at && at >= text && at <= text + n ? (long)(at - text) : -1;
        snprintf(err, errlen, "%s: not JSON (near byte %ld)", path, off);
    }
    free(text);
    return root;
}
