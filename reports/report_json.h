/* report_json.h — the JSON report (reports/schema/report-1.schema.json) and
 * the one-line form a job's result travels in from rank 0 to the launcher.
 *
 * Ownership: the writers only read the report; strings returned are the
 * caller's. Every string written is valid UTF-8 (utf8.h). */
#ifndef CG_REPORT_JSON_H
#define CG_REPORT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "report_file.h"
#include "result.h"

struct cJSON;

/* Write r as JSON to path ("-" is standard output; report_file.h says how
 * each kind of target is written). 0, or -1 with st ("path: cannot write: ..."). */
int cg_report_write_json(const cg_report *r, const char *path, cg_status *st);
/* One case as a single line of JSON (free with cJSON_free), or NULL on OOM:
 * how a job's result travels from rank 0 to the launcher. */
char *cg_case_json_line(const cg_case_result *c);
/* Parse such a line back into a case appended to r: every field the line
 * holds comes back, so writing the case again gives the same line. 0, or -1
 * if malformed (the case may then be appended half-filled). */
int cg_case_from_json_line(cg_report *r, const char *line);
/* A JSON report file parsed (free with cJSON_Delete): what `compare` reads.
 * NULL with st: "PATH: cannot read: ...", "PATH: not a collgrad-check
 * report" (not JSON, another schema, a case without a name or a world). */
struct cJSON *cg_report_json_load(const char *path, cg_status *st);
/* A member of a parsed report object: the string (NULL when absent or not a
 * string), the number (dflt when absent or not a number). */
const char *cg_json_str(const struct cJSON *o, const char *key);
double cg_json_num(const struct cJSON *o, const char *key, double dflt);
/* The whole number o[key] when it is one and fits the type, else dflt (a
 * report from elsewhere may hold 1e308 or 2.5 where a rank belongs). */
int cg_json_int(const struct cJSON *o, const char *key, int dflt);
int64_t cg_json_int64(const struct cJSON *o, const char *key, int64_t dflt);
/* "[1, 2, 3, ...]" of a report's values array into buf (cut to len): at
 * most `max` entries, numbers with `digits` significant digits, a string
 * entry ("nan", "inf") as it is. */
void cg_json_numbers_text(const struct cJSON *arr, int max, int digits, char *buf, size_t len);

#endif
