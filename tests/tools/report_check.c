/* report_check.c — validate JSON files against a JSON Schema (the test
 * suite's check of every report it writes; json_schema.h says which keywords
 * count).
 *
 *   report_check SCHEMA.json FILE...
 *
 * One line per file that fails ("FILE: /cases/0/status: ..."), nothing for a
 * valid one. Exit 0 every file valid, 1 some file invalid or unreadable, 2 bad
 * usage or a schema this validator cannot enforce. */
#include <stdio.h>

#include "json_file.h"
#include "json_schema.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: report_check SCHEMA.json FILE...\n");
        return 2;
    }
    char err[2048];
    cJSON *schema = cg_json_load_file(argv[1], err, sizeof err);
    if (!schema || cg_schema_check(schema, err, sizeof err) != 0) {
        fprintf(stderr, "report_check: %s%s\n", schema ? argv[1] : "", schema ? ": unusable schema: " : "");
        fprintf(stderr, "report_check: %s\n", err);
        cJSON_Delete(schema);
        return 2;
    }
    int status = 0;
    for (int i = 2; i < argc; i++) {
        cJSON *doc = cg_json_load_file(argv[i], err, sizeof err);
        int rc = doc ? cg_schema_validate(schema, doc, err, sizeof err) : 1;
        if (rc != 0 && doc)
            printf("%s: %s\n", argv[i], err);
        else if (rc != 0)
            printf("%s\n", err);
        if (rc < 0)
            status = 2;
        else if (rc > 0 && status == 0)
            status = 1;
        cJSON_Delete(doc);
    }
    cJSON_Delete(schema);
    return status;
}
