/* json_file.h — a whole JSON file into a cJSON tree, for the test tools. */
#ifndef CG_JSON_FILE_H
#define CG_JSON_FILE_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* The parsed file (the caller frees it with cJSON_Delete), or NULL with err
 * ("PATH: cannot read: ...", "PATH: not JSON (near byte N)"). */
cJSON *cg_json_load_file(const char *path, char *err, size_t errlen);

#endif
