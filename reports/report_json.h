/* report_json.h — JSON reports and atomic file writes. */
#ifndef CG_REPORT_JSON_H
#define CG_REPORT_JSON_H

#include <stddef.h>

#include "result.h"

/* Write r as JSON to path atomically. 0, or -1 with err ("path: cannot write: ..."). */
int cg_report_write_json(const cg_report *r, const char *path, char *err, size_t errlen);
/* One case as a single line of JSON (free with cJSON_free), or NULL on OOM:
 * how a job's result travels from rank 0 to the launcher. */
char *cg_case_json_line(const cg_case_result *c);
/* Parse such a line back into a case appended to r. 0, or -1 if malformed. */
int cg_case_from_json_line(cg_report *r, const char *line);
/* A member of a parsed report object: the string (NULL when absent or not a
 * string), the number (dflt when absent or not a number). */
struct cJSON;
const char *cg_json_str(const struct cJSON *o, const char *key);
double cg_json_num(const struct cJSON *o, const char *key, double dflt);
/* Write text to path through a temporary file and rename(2). 0 or -1 with err. */
int cg_write_file_atomic(const char *path, const char *text, char *err, size_t errlen);

#endif
