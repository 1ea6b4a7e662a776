/* tmpdir.c — see tmpdir.h. */
#include "tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char owner_name[] = "owner";
/* What a launcher's directory may hold (launcher.c; "jobs" and "cases" from
 * before the bundle): removed by name, never by
 * a recursive walk, so a reaper can only delete files the tool makes. */
static const char *const known_files[] = {"bundle", "board", "results", "log",
                                          "jobs",   "cases", owner_name};

const char *cg_tmp_root(void)
{
    const char *t = getenv("TMPDIR");
    struct stat st;
    if (t && t[0] == '/' && strlen(t) < 200 && stat(t, &st) == 0 && S_ISDIR(st.st_mode))
        return t;
    return "/tmp";
}

/* Field 22 of /proc/PID/stat: the start time in clock ticks since boot; 0
 * when unknown. The command name (field 2) may hold spaces: parse after ')'. */
static unsigned long long start_time(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long long t = 0;
    for (int field = 2; p && *p && field < 22; p++)
        if (*p == ' ' && ++field == 22)
            t = strtoull(p + 1, NULL, 10);
    return t;
}

int cg_tmpdir_create(char *dir, size_t len, cg_status *st)
{
    if ((size_t)snprintf(dir, len, "%s/collgrad-XXXXXX", cg_tmp_root()) >= len || !mkdtemp(dir)) {
        cg_error_infra(st, "cannot create a temporary directory under %s: %s", cg_tmp_root(),
                 strerror(errno));
        return -1;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, owner_name);
    FILE *f = fopen(path, "wx");
    long pid = (long)getpid();
    if (!f || fprintf(f, "%ld %llu\n", pid, start_time(pid)) < 0 || fclose(f) != 0) {
        cg_error(st, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int cg_tmpdir_remove(const char *dir, const char *const *files, int n)
{
    char path[512];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/%s", dir, owner_name);
    unlink(path);
    return rmdir(dir);
}

/* True when dir (one of ours) names an owner that is gone. */
static bool owner_gone(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, owner_name);
    FILE *f = fopen(path, "r");
    long pid = 0;
    unsigned long long started = 0;
    int got = f ? fscanf(f, "%ld %llu", &pid, &started) : 0;
    if (f)
        fclose(f);
    if (got != 2 || pid <= 0)
        return false; /* not an owner file we wrote: leave it */
    if (kill((pid_t)pid, 0) != 0)
        return errno == ESRCH;
    unsigned long long now = start_time(pid); /* alive: the same process, or a reused pid? */
    return started != 0 && now != 0 && now != started;
}

int cg_tmpdir_reap_stale(void)
{
    const char *root = cg_tmp_root();
    DIR *d = opendir(root);
    int removed = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "collgrad-", 9) != 0 || strlen(e->d_name) != 15)
            continue; /* collgrad-XXXXXX only (not collgrad-torch-...) */
        char dir[512];
        struct stat st;
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
            continue;
        if (owner_gone(dir) &&
            cg_tmpdir_remove(dir, known_files, (int)(sizeof known_files / sizeof *known_files)) == 0)
            removed++;
    }
    if (d)
        closedir(d);
    return removed;
}
