/* tmpdir.h — the launcher's private temporary directory.
 *
 * It lives under $TMPDIR (when that is an absolute path to a directory;
 * else /tmp), is named collgrad-XXXXXX (mkdtemp: mode 0700, ours alone) and
 * holds an `owner` file with the launcher's pid and start time. A launcher
 * killed by SIGKILL cannot remove its directory, so every launcher first
 * reaps the directories of owners that are gone: same uid, an owner file
 * naming a process that no longer exists (or a pid reused by a process that
 * started later). Directories without an owner file are never touched. */
#ifndef CG_TMPDIR_H
#define CG_TMPDIR_H

#include <stddef.h>

#include "status.h"

/* $TMPDIR when usable, else "/tmp". Never NULL. */
const char *cg_tmp_root(void);
/* Make the directory into dir (len bytes) and write its owner file. 0, or -1
 * with st. */
int cg_tmpdir_create(char *dir, size_t len, cg_status *st);
/* Remove dir's files named in files[0..n) and the owner file, then dir. 0 or -1. */
int cg_tmpdir_remove(const char *dir, const char *const *files, int n);
/* Remove the stale directories described above under cg_tmp_root(). Best
 * effort: whatever cannot be removed stays. Returns how many were removed. */
int cg_tmpdir_reap_stale(void);

#endif
