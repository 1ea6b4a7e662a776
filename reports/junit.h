/* junit.h — JUnit XML for CI dashboards: one <testsuite>, one <testcase> per
 * job, <failure> with the failing checks, <error> with the error message,
 * <skipped/>. Written atomically like the JSON report. */
#ifndef CG_JUNIT_H
#define CG_JUNIT_H

#include <stddef.h>

#include "result.h"

int cg_report_write_junit(const cg_report *r, const char *path, char *err, size_t errlen);

#endif
