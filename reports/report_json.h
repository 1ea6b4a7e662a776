/* report_json.h — JSON reports and atomic file writes. */
#ifndef CG_REPORT_JSON_H
#define CG_REPORT_JSON_H

#include <stddef.h>

#include "result.h"

/* Write r as JSON to path atomically. 0, or -1 with err ("path: cannot write: ..."). */
int cg_report_write_json(const cg_report *r, const char *path, char *err, size_t errlen);
/* Write text to path through a temporary file and rename(2). 0 or -1 with err. */
int cg_write_file_atomic(const char *path, const char *text, char *err, size_t errlen);

#endif
