/* report_file.h — where a report goes, and getting it there whole.
 *
 * A report target (the FILE of --json FILE and --junit FILE) is one of:
 *   "-"                    standard output;
 *   a regular file, or a name that does not exist yet: written atomically —
 *                          a temporary "FILE.tmp.XXXXXX" made by mkstemp(3)
 *                          in FILE's own directory, written, fsync'd, then
 *                          rename(2)d over FILE, so a reader never sees half
 *                          a report and a crash leaves the previous one;
 *   a FIFO or a character device (/dev/null, a tty), named directly or
 *   through a symbolic link (/dev/stdout): written as a stream, never
 *                          replaced; a path that leads to the process's own
 *                          standard output or error is written to that
 *                          descriptor.
 * Refused with a clear message: a directory, a block device, a socket, a
 * symbolic link to anything else (a regular file, nothing): the writer never
 * replaces or follows a link it did not expect. No target is ever opened with
 * O_CREAT through a link: mkstemp uses O_EXCL, streams are opened without
 * O_CREAT and checked with fstat after opening.
 *
 * When a report goes to standard output, the terminal output (progress lines,
 * summary) must not mix into it: cg_report_targets_prepare moves file
 * descriptor 1 to where standard error goes and keeps the real standard
 * output for the report alone. */
#ifndef CG_REPORT_FILE_H
#define CG_REPORT_FILE_H

#include <stddef.h>

#include "status.h"

/* Check the --json and --junit targets (either may be NULL) before anything
 * runs, so a bad one costs no run: 0, or -1 with st ("PATH: is a directory;
 * ..."): the caller exits with the usage status. Refuses both reports on
 * standard output, and both on the same path. When a target is standard
 * output, redirects descriptor 1 to standard error from here on (stdio's
 * stdout included) and keeps a close-on-exec duplicate of the real one for
 * cg_report_output_write. Call it once, before any output. */
int cg_report_targets_prepare(const char *json, const char *junit, cg_status *st);

/* Check one target (named by its option, "--md", in the message about an
 * empty name) as cg_report_targets_prepare does, claiming nothing: 0, or -1
 * with st. For a tool with targets of its own (matrix, export-ir). */
int cg_report_target_check(const char *option, const char *path, cg_status *st);

/* Write text (NUL-terminated) to the target path as described above. 0, or
 * -1 with st ("PATH: cannot write: ..."). A FIFO without a reader is an
 * error, not a wait. Owns nothing; text is not modified. */
int cg_report_output_write(const char *path, const char *text, cg_status *st);

/* The atomic regular-file half of cg_report_output_write: refuses any path
 * that exists and is not a regular file. The file keeps the permission bits
 * of the one it replaces (new files: 0666 less the umask). 0 or -1 with st;
 * the temporary file is removed on every failure. */
int cg_write_file_atomic(const char *path, const char *text, cg_status *st);

#endif
