/* junit.h — JUnit XML for CI dashboards, valid against the Jenkins/Ant
 * junit-10 XSD (reports/schema/junit-10.xsd; the tests check with xmllint).
 *
 *   <testsuites>, one <testsuite> with the run's properties (mode, transport,
 *   rules, device), one <testcase> per job:
 *     classname "collgrad-check.TRANSPORT.RULES.W<world>", name the case name
 *       ("oracle" for the transport and rule set of an oracle-only run; other
 *       characters than [A-Za-z0-9_-] in a component become '_', so the dots
 *       stay Jenkins' package separators). The pair is unique in a report:
 *       should two jobs still collide, the later name gets " #2", " #3", ...
 *     <failure message="...">: the first failing check with its first
 *       differing element, both values, and the diagnosis; the text lists
 *       every failing check the same way.
 *     <error type="bad case|infrastructure" message="...">, <skipped message>.
 *     <system-out>: the case file, its source document, hazard warnings.
 *
 * Text is made valid UTF-8 and free of the characters XML 1.0 forbids the
 * way utf8.h says. Written like the JSON report (report_file.h: "-" is
 * standard output; files atomically). */
#ifndef CG_JUNIT_H
#define CG_JUNIT_H

#include <stddef.h>

#include "status.h"

#include "result.h"

/* r is only read. 0, or -1 with st ("PATH: cannot write: ..."). */
int cg_report_write_junit(const cg_report *r, const char *path, cg_status *st);

#endif
