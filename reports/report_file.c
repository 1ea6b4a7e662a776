/* report_file.c — see report_file.h. */
#include "report_file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The real standard output after cg_report_targets_prepare moved descriptor
 * 1 aside (-1 before: descriptor 1 still is it), and the target that chose
 * it. The name is kept because after the move /dev/stdout leads to standard
 * error: the path can no longer say where it meant. Both live until exit. */
static int report_stdout = -1;
static char *report_stdout_path;

typedef enum { TO_FILE, TO_STREAM, TO_FD } target_kind;

typedef struct target {
    target_kind kind;
    int fd;        /* TO_FD: the descriptor to write */
    bool via_link; /* TO_STREAM: reached through a symbolic link (/dev/stdout) */
} target;

static int stdout_fd(void) { return report_stdout >= 0 ? report_stdout : STDOUT_FILENO; }

static bool same_file(const struct stat *st, int fd)
{
    struct stat s;
    return fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket"
                                                                      : "not a regular file";
}

/* What writing to path means (report_file.h), or -1 with st for a target
 * the writer refuses. Looks, never opens. */
static int classify(const char *path, target *t, cg_status *st)
{
    memset(t, 0, sizeof *t);
    if (strcmp(path, "-") == 0 || (report_stdout_path && strcmp(path, report_stdout_path) == 0)) {
        t->kind = TO_FD;
        t->fd = stdout_fd();
        return 0;
    }
    struct stat l, s;
    if (lstat(path, &l) != 0) {
        if (errno == ENOENT) {
            t->kind = TO_FILE;
            return 0;
        }
        cg_error(st, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(l.st_mode)) {
        t->kind = TO_FILE;
        return 0;
    }
    bool link = S_ISLNK(l.st_mode);
    if (link && stat(path, &s) != 0) {
        cg_error(st, "%s: is a symbolic link to nothing (%s); not replacing it", path, strerror(errno));
        return -1;
    }
    const struct stat *sb = link ? &s : &l;
    if (same_file(sb, stdout_fd()) || same_file(sb, STDERR_FILENO)) {
        t->kind = TO_FD; /* /dev/stdout, /dev/stderr, /proc/self/fd/N: the descriptor itself */
        t->fd = same_file(sb, stdout_fd()) ? stdout_fd() : STDERR_FILENO;
        return 0;
    }
    if (S_ISCHR(sb->st_mode) || S_ISFIFO(sb->st_mode)) {
        t->kind = TO_STREAM;
        t->via_link = link;
        return 0;
    }
    if (link && S_ISREG(sb->st_mode))
        cg_error(st, "%s: is a symbolic link to a regular file; not following it (name the file itself)",
                 path);
    else if (S_ISDIR(sb->st_mode))
        cg_error(st, "%s: is a directory; a report needs a file name (or - for standard output)", path);
    else
        cg_error(st, "%s: is %s; not writing a report there", path, kind_of(sb->st_mode));
    return -1;
}

/* A new "PATH.tmp.XXXXXX" beside path, opened by mkstemp(3) (O_CREAT|O_EXCL:
 * never through a link): its descriptor, with *tmp its name (the caller frees
 * it), or -1 with st and nothing left behind. */
static int open_temp_beside(const char *path, char **tmp, cg_status *st)
{
    static const char suffix[] = ".tmp.XXXXXX";
    size_t len = strlen(path);
    *tmp = malloc(len + sizeof suffix);
    if (!*tmp) {
        cg_error_infra(st, "%s: out of memory", path);
        return -1;
    }
    memcpy(*tmp, path, len);
    memcpy(*tmp + len, suffix, sizeof suffix);
    int fd = mkstemp(*tmp);
    if (fd < 0) {
        cg_error(st, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(*tmp);
        *tmp = NULL;
    }
    return fd;
}

static int check_can_create(const char *path, cg_status *st)
{
    char *tmp;
    int fd = open_temp_beside(path, &tmp, st);
    if (fd < 0)
        return -1;
    int rc = 0;
    if (close(fd) != 0 || unlink(tmp) != 0) {
        cg_error(st, "%s: cannot remove the trial file %s: %s", path, tmp, strerror(errno));
        rc = -1;
    }
    free(tmp);
    return rc;
}

/* The directory a new file at path would go in must exist and take a new
 * file (the writer's temporary one, made and removed here): said before the
 * run rather than after it. Permission bits alone do not tell (root passes
 * access(2) on /proc and on a read-only mount). */
static int check_parent(const char *path, cg_status *st)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return check_can_create(path, st); /* in the current directory */
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *dir = strndup(path, n);
    if (!dir) {
        cg_error_infra(st, "%s: out of memory", path);
        return -1;
    }
    struct stat s;
    int rc = 0;
    if (stat(dir, &s) != 0 || !S_ISDIR(s.st_mode)) {
        cg_error(st, "%s: cannot write: %s is not a directory", path, dir);
        rc = -1;
    }
    free(dir);
    return rc != 0 ? rc : check_can_create(path, st);
}

/* Descriptor 1 to standard error, the real standard output kept for the
 * report (close-on-exec: the ranks mpiexec starts must not hold it open). */
static int claim_stdout(const char *path, cg_status *st)
{
    fflush(stdout);
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
        cg_error(st, "%s: standard output: %s", path, strerror(errno));
        return -1;
    }
    if (!(report_stdout_path = strdup(path)) || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        cg_error(st, "%s: cannot move the terminal output to standard error: %s", path, strerror(errno));
        free(report_stdout_path);
        report_stdout_path = NULL;
        close(fd);
        return -1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines interleave with stderr's in order */
    report_stdout = fd;
    return 0;
}

/* report_file.h: what cg_report_target_check says, with the target's kind. */
static int check_target(const char *option, const char *path, target *t, cg_status *st)
{
    CG_CHECK(path[0], st, "%s '': expected a file name (or - for standard output)", option);
    CG_TRY(classify(path, t, st));
    return t->kind == TO_FILE ? check_parent(path, st) : 0;
}

int cg_report_target_check(const char *option, const char *path, cg_status *st)
{
    target t;
    return check_target(option, path, &t, st);
}

int cg_report_targets_prepare(const char *json, const char *junit, cg_status *st)
{
    const char *paths[2] = {json, junit};
    target t[2];
    for (int i = 0; i < 2; i++)
        if (paths[i])
            CG_TRY(check_target(i == 0 ? "--json" : "--junit", paths[i], &t[i], st));
    bool to_stdout[2] = {json && t[0].kind == TO_FD && t[0].fd == STDOUT_FILENO,
                         junit && t[1].kind == TO_FD && t[1].fd == STDOUT_FILENO};
    CG_CHECK(!(json && junit && (strcmp(json, junit) == 0 || (to_stdout[0] && to_stdout[1]))), st,
             "--json %s and --junit %s would write to the same place; give each its own", json, junit);
    for (int i = 0; i < 2; i++)
        if (to_stdout[i])
            return claim_stdout(paths[i], st);
    return 0;
}

/* All of text to fd. A reader that went away is an error (EPIPE), not a
 * SIGPIPE that would end the tool outside its exit-status contract. */
static int write_all(int fd, const char *path, const char *text, cg_status *st)
{
    struct sigaction ignore = {0}, old;
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    bool restore = sigaction(SIGPIPE, &ignore, &old) == 0;
    size_t n = strlen(text);
    int rc = 0;
    while (n > 0) {
        ssize_t w = write(fd, text, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            cg_error(st, "%s: cannot write: %s", path, w < 0 ? strerror(errno) : "nothing written");
            rc = -1;
            break;
        }
        text += w;
        n -= (size_t)w;
    }
    if (restore)
        sigaction(SIGPIPE, &old, NULL);
    return rc;
}

/* Open an existing FIFO or character device for writing: no O_CREAT, no
 * O_TRUNC, O_NOFOLLOW unless the user's path is the link, and fstat after
 * opening, so whatever raced in between is never created, emptied or written
 * unless it is still a stream. O_NONBLOCK makes a FIFO without a reader fail
 * (ENXIO) instead of waiting forever; writes then block as usual. */
static int open_stream(const char *path, const target *t, cg_status *st)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | (t->via_link ? 0 : O_NOFOLLOW));
    if (fd < 0) {
        if (errno == ENXIO)
            cg_error(st, "%s: cannot write: a FIFO with no reader", path);
        else
            cg_error(st, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    struct stat s;
    int flags = fcntl(fd, F_GETFL);
    if (fstat(fd, &s) != 0 || !(S_ISCHR(s.st_mode) || S_ISFIFO(s.st_mode)) || flags < 0 ||
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        cg_error(st, "%s: cannot write: changed while being opened", path);
        close(fd);
        return -1;
    }
    return fd;
}

/* Make a rename durable: fsync the directory that holds path. Best effort:
 * the report is in place either way; only a power cut could lose it. */
static void sync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int cg_write_file_atomic(const char *path, const char *text, cg_status *st)
{
    struct stat old;
    mode_t mode;
    if (lstat(path, &old) == 0) {
        if (!S_ISREG(old.st_mode)) {
            cg_error(st, "%s: exists and is not a regular file; not replacing it", path);
            return -1;
        }
        mode = old.st_mode & 0777;
    } else if (errno == ENOENT) {
        mode_t mask = umask(0); /* the only way to read it; put back at once */
        umask(mask);
        mode = 0666 & ~mask;
    } else {
        cg_error(st, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    char *tmp;
    int fd = open_temp_beside(path, &tmp, st);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, path, text, st);
    if (rc == 0 && (fchmod(fd, mode) != 0 || (fsync(fd) != 0 && errno != EINVAL))) {
        cg_error(st, "%s: cannot write: %s", path, strerror(errno));
        rc = -1;
    }
    if (close(fd) != 0 && rc == 0) {
        cg_error(st, "%s: cannot write: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        cg_error(st, "%s: cannot replace it: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        unlink(tmp);
    else
        sync_parent(path);
    free(tmp);
    return rc;
}

int cg_report_output_write(const char *path, const char *text, cg_status *st)
{
    target t;
    if (classify(path, &t, st) != 0)
        return -1;
    if (t.kind == TO_FILE)
        return cg_write_file_atomic(path, text, st);
    if (t.kind == TO_FD)
        return write_all(t.fd, path, text, st);
    int fd = open_stream(path, &t, st);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, path, text, st);
    if (close(fd) != 0 && rc == 0) {
        cg_error(st, "%s: cannot write: %s", path, strerror(errno));
        rc = -1;
    }
    return rc;
}
