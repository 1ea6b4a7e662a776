/* export_ir.c — `collgrad-check export-ir` (export_ir.h): the cases of the
 * command line as one IR document (ir_document.h). */
#include "export_ir.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_set.h"
#include "cli.h"
#include "ir_document.h"
#include "report_json.h"

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
