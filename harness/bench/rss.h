/* rss.h — a process's peak resident set size and the memory left, for the benchmarks. */
#ifndef CG_RSS_H
#define CG_RSS_H

#include <stdint.h>

/* VmHWM of /proc/self/status in bytes: the peak resident set since the last
 * cg_rss_reset_peak (or since the start); 0 where /proc does not say. */
int64_t cg_rss_peak(void);
/* Reset the peak to the current resident set (writes 5 to
 * /proc/self/clear_refs, Linux 4.0+). Where that fails the peak stays the
 * lifetime peak: an upper bound, never an underestimate. */
void cg_rss_reset_peak(void);
/* The memory this process may still take, in bytes: MemAvailable of
 * /proc/meminfo, or less where a cgroup (v2 memory.max) leaves less; 0 where
 * neither says. What the bench compares a point's estimate with before it
 * runs, so a size that cannot fit is a skipped row, not the OOM killer. */
int64_t cg_mem_available(void);

#endif
