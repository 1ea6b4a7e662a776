/* rss.c — peak resident set size and available memory from /proc and the cgroup (rss.h). */
#include "rss.h"

#include <stdio.h>

/* The "KEY: N kB" line of a /proc file (format: "VmHWM: %lld kB"), in bytes;
 * 0 where the file or the line is missing. */
static int64_t proc_kb(const char *path, const char *format)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, format, &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (int64_t)kb * 1024;
}

int64_t cg_rss_peak(void) { return proc_kb("/proc/self/status", "VmHWM: %lld kB"); }

void cg_rss_reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* The first number of a one-line file, or -1 ("max", absent, unreadable). */
static int64_t file_number(const char *path)
{
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return (int64_t)v;
}

int64_t cg_mem_available(void)
{
    int64_t avail = proc_kb("/proc/meminfo", "MemAvailable: %lld kB");
    int64_t max = file_number("/sys/fs/cgroup/memory.max"), used = file_number("/sys/fs/cgroup/memory.current");
    if (max > 0 && used >= 0) {
        int64_t left = max > used ? max - used : 0;
        if (avail == 0 || left < avail)
            avail = left;
    }
    return avail;
}
