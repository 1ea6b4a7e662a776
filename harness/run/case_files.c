/* case_files.c — the case files under the command line's paths
 * (case_files.h). */
#define _XOPEN_SOURCE 700 /* realpath(3) */
#include "case_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case_set.h"
#include "cli.h"

/* The walk's state: the files found, and every directory and file already
 * taken by (dev, inode), so a symbolic-link loop ends and a case reached by
 * two paths runs once. Owns paths' strings until cg_case_set_load frees them. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
} file_id;

typedef struct walk_state {
    char **p;
    int n, cap;
    file_id *seen;
    size_t nseen, capseen;
    char *refusal;       /* why the whole selection failed */
    size_t refusal_len;
} walk_state;

/* A path the whole selection fails on: printed, and kept for the reports. */
static void refusal(walk_state *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refusal(walk_state *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->refusal, w->refusal_len, fmt, ap);
    va_end(ap);
    fprintf(stderr, "collgrad-check: %s\n", w->refusal);
}

static int push_path(walk_state *w, const char *path)
{
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 64;
        char **p = realloc(w->p, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        w->p = p;
        w->cap = cap;
    }
    if (!(w->p[w->n] = strdup(path)))
        return -1;
    w->n++;
    return 0;
}

/* 1 if (dev, ino) was seen before, 0 after recording it, -1 out of memory.
 * Linear: a case tree holds hundreds of entries, not millions. */
static int seen_before(walk_state *w, const struct stat *st)
{
    for (size_t i = 0; i < w->nseen; i++)
        if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
            return 1;
    if (w->nseen == w->capseen) {
        size_t cap = w->capseen ? 2 * w->capseen : 64;
        file_id *grown = realloc(w->seen, cap * sizeof *grown);
        if (!grown)
            return -1;
        w->seen = grown;
        w->capseen = cap;
    }
    w->seen[w->nseen++] = (file_id){st->st_dev, st->st_ino};
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void skip_note(const char *path, const char *why)
{
    fprintf(stderr, "collgrad-check: note: %s: %s, skipped\n", path, why);
}

static int walk_fd(walk_state *w, int dfd, const char *dir);

/* One directory entry: a subdirectory is walked (once, links followed), a
 * regular *.case file kept (once); a FIFO, socket or device is never opened,
 * so none can block the walk. 0, or 3 out of memory / on an I/O error. */
static int walk_entry(walk_state *w, int dfd, const char *dir, const char *name)
{
    char path[4096];
    int len = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (len < 0 || (size_t)len >= sizeof path) {
        skip_note(dir, "an entry's path is longer than 4095 bytes");
        return 0;
    }
    bool is_case = ends_with(name, ".case");
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 0; /* gone since readdir */
    if (S_ISLNK(st.st_mode) && fstatat(dfd, name, &st, 0) != 0) {
        char why[160];
        snprintf(why, sizeof why, "a symbolic link that does not resolve (%s)", strerror(errno));
        skip_note(path, why);
        return 0;
    }
    if (S_ISDIR(st.st_mode)) {
        int seen = seen_before(w, &st);
        if (seen != 0) {
            if (seen > 0)
                skip_note(path, "a directory already walked (a symbolic-link loop or a second path to it)");
            return seen < 0 ? CG_EXIT_INFRA : 0;
        }
        int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
        if (sub < 0) {
            refusal(w, "%s: cannot open directory: %s", path, strerror(errno));
            return CG_EXIT_INFRA;
        }
        return walk_fd(w, sub, path);
    }
    if (!is_case)
        return 0;
    if (!S_ISREG(st.st_mode)) {
        char why[80];
        snprintf(why, sizeof why, "%s, not a case file", cg_file_type_name(st.st_mode));
        skip_note(path, why);
        return 0;
    }
    int seen = seen_before(w, &st);
    if (seen > 0)
        return 0; /* the same file by a second path: it runs once */
    return seen < 0 || push_path(w, path) != 0 ? CG_EXIT_INFRA : 0;
}

/* Every *.case file under the directory open as dfd (which this closes). */
static int walk_fd(walk_state *w, int dfd, const char *dir)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        refusal(w, "%s: cannot open directory: %s", dir, strerror(errno));
        close(dfd);
        return CG_EXIT_INFRA;
    }
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] != '.')
            rc = walk_entry(w, dirfd(d), dir, e->d_name);
        errno = 0;
    }
    if (rc == 0 && errno != 0) {
        refusal(w, "%s: cannot read directory: %s", dir, strerror(errno));
        rc = CG_EXIT_INFRA;
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return path && path[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <this executable's dir>/CG_BIN_TO_CASES (../share/collgrad-check/cases),
 * which exists only when the executable is an installed one. */
static bool cases_beside_executable(char *out, size_t len)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    char joined[4096 + 64];
    snprintf(joined, sizeof joined, "%s/%s", exe, CG_BIN_TO_CASES);
    char *clean = realpath(joined, NULL); /* no "bin/.." in the paths reports print */
    if (!clean)
        return false;
    snprintf(out, len, "%s", clean);
    free(clean);
    return is_dir(out);
}

/* Where the built-in cases are, first found: $COLLGRAD_CASES_DIR; the cases
 * installed with this very executable (bin/../share/collgrad-check/cases,
 * so an install moved by `cmake --install --prefix P` still finds them, and
 * an installed binary runs its own version of them even while the source
 * tree is around); the source tree (a build-tree binary); the configured
 * install dir, also returned when nothing exists so the error names it. */
const char *cg_builtin_cases_dir(void)
{
    static char beside[4096];
    const char *env = getenv("COLLGRAD_CASES_DIR");
    if (env && env[0])
        return env;
    if (cases_beside_executable(beside, sizeof beside))
        return beside;
    if (is_dir(CG_CASES_DIR))
        return CG_CASES_DIR;
    return CG_INSTALLED_CASES_DIR;
}

/* A path named on the command line: a directory is walked, a regular file
 * kept whatever its name; anything else is the user's mistake, exit 2. */
static int collect_path(walk_state *w, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        refusal(w, "%s: cannot read: %s", path, strerror(errno));
        return CG_EXIT_USAGE;
    }
    if (S_ISDIR(st.st_mode)) {
        if (seen_before(w, &st) != 0)
            return 0; /* named twice, or inside a directory already walked */
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
        if (dfd < 0) {
            refusal(w, "%s: cannot open directory: %s", path, strerror(errno));
            return CG_EXIT_INFRA;
        }
        return walk_fd(w, dfd, path);
    }
    if (!S_ISREG(st.st_mode)) {
        refusal(w, "%s: expected a case file or a directory, got %s", path,
                cg_file_type_name(st.st_mode));
        return CG_EXIT_USAGE;
    }
    int seen = seen_before(w, &st);
    return seen < 0 || (seen == 0 && push_path(w, path) != 0) ? CG_EXIT_INFRA : 0;
}

static int collect(walk_state *w, char *const *paths, int npaths)
{
    char *dflt[1];
    if (npaths == 0) {
        dflt[0] = (char *)cg_builtin_cases_dir(); /* only read: paths are char * for argv */
        paths = dflt;
        npaths = 1;
    }
    for (int i = 0; i < npaths; i++) {
        size_t before = (size_t)w->n;
        int rc = collect_path(w, paths[i]);
        if (rc != 0)
            return rc;
        if ((size_t)w->n > before) /* w->p is NULL while nothing was found */
            qsort(w->p + before, (size_t)w->n - before, sizeof *w->p, cmp_str);
    }
    return 0;
}

int cg_case_files_find(cg_case_files *out, char *const *paths, int npaths, char *refusal, size_t len)
{
    walk_state w = {.refusal = refusal, .refusal_len = len};
    int rc = collect(&w, paths, npaths);
    free(w.seen);
    *out = (cg_case_files){w.p, w.n};
    return rc;
}

void cg_case_files_free(cg_case_files *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->paths[i]);
    free(f->paths);
    f->paths = NULL;
    f->n = 0;
}
