/* board.c — see board.h. */
#include "board.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

static cg_board_slot *my_slot; /* this rank's slot, NULL outside a job */

/* The file starts with this header, so a rank never trusts a file that only
 * happens to have the right size: a truncated or foreign board is an error,
 * never a SIGBUS or garbage in a report. */
typedef struct board_header {
    char magic[8]; /* "CGBOARD1" */
    int32_t world;
    int32_t slot_size;
} board_header;

static const char board_magic[8] = {'C', 'G', 'B', 'O', 'A', 'R', 'D', '1'};

static size_t board_bytes(int world)
{
    return sizeof(board_header) + sizeof(cg_board_slot) * (size_t)world;
}

static int map_fd(cg_board *b, int fd, const char *path, cg_status *st)
{
    void *p = mmap(NULL, b->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        cg_error_infra(st, "%s: cannot map the status board: %s", path, strerror(errno));
        return -1;
    }
    b->base = p;
    b->slots = (cg_board_slot *)((char *)p + sizeof(board_header));
    return 0;
}

int cg_board_create(cg_board *b, const char *path, int world, cg_status *st)
{
    b->world = world;
    b->bytes = board_bytes(world);
    /* a fresh file of our own, never one that was there (O_EXCL), never through a link */
    if (unlink(path) != 0 && errno != ENOENT) {
        cg_error(st, "%s: cannot replace the status board: %s", path, strerror(errno));
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        cg_error_infra(st, "%s: cannot create the status board: %s", path, strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)b->bytes) != 0) {
        cg_error_infra(st, "%s: cannot size the status board: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (map_fd(b, fd, path, st) != 0)
        return -1;
    memset(b->base, 0, b->bytes);
    board_header *h = b->base;
    memcpy(h->magic, board_magic, sizeof h->magic);
    h->world = world;
    h->slot_size = (int32_t)sizeof(cg_board_slot);
    return 0;
}

int cg_board_attach(cg_board *b, const char *path, int world, cg_status *st)
{
    b->world = world;
    b->bytes = board_bytes(world);
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        cg_error(st, "%s: cannot open the status board: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    board_header h;
    bool ours = S_ISREG(sb.st_mode) && sb.st_uid == geteuid() && (size_t)sb.st_size == b->bytes &&
                pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && memcmp(h.magic, board_magic, 8) == 0 &&
                h.world == world && h.slot_size == (int32_t)sizeof(cg_board_slot);
    if (!ours) {
        cg_error(st, "%s: not a status board of this tool for world %d (%lld bytes, expected %zu, "
                 "with its header)", path, world, (long long)sb.st_size, b->bytes);
        close(fd);
        return -1;
    }
    return map_fd(b, fd, path, st);
}

void cg_board_close(cg_board *b)
{
    if (b->base)
        munmap(b->base, b->bytes);
    b->base = NULL;
    b->slots = NULL;
    my_slot = NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The call this rank is about to make (or stopped before), in its slot. */
static void publish(const cg_tp_fingerprint *call)
{
    snprintf(my_slot->entry, sizeof my_slot->entry, "%s", cg_tp_entry_name(call->entry));
    my_slot->ordinal = call->ordinal;
    my_slot->seq = call->seq;
    my_slot->backward = call->backward;
    my_slot->since = now();
}

/* The board's watcher (transport.h): "in a call" from before it to after it. */
static int before_call(void *self, cg_tp *tp, const cg_tp_fingerprint *call)
{
    (void)self, (void)tp;
    if (!my_slot)
        return 0;
    publish(call);
    my_slot->in_call = 1;
    return 0;
}

void cg_board_stop_before(const cg_tp_fingerprint *call)
{
    if (!my_slot)
        return;
    publish(call);
    my_slot->in_call = 0; /* it stops before the call: its peers wait inside it */
    my_slot->before_call = 1;
    my_slot->injected = 1;
}

static void after_call(void *self, cg_tp *tp, const cg_tp_fingerprint *call, int rc)
{
    (void)self, (void)tp, (void)call, (void)rc;
    if (my_slot)
        my_slot->in_call = 0;
}

static void on_exit_record(void)
{
    if (my_slot && my_slot->state == CG_RANK_RUNNING)
        my_slot->state = CG_RANK_EXITED;
}

static void on_fatal_signal(int sig)
{
    if (my_slot && my_slot->state == CG_RANK_RUNNING) {
        my_slot->state = CG_RANK_SIGNALED;
        my_slot->signal_no = sig;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A group's calls show on the rank's one slot too (no state to split). */
static int board_split(void *self, cg_tp *tp, int color, int key, cg_tp_watcher *child)
{
    (void)self, (void)tp, (void)color, (void)key;
    *child = (cg_tp_watcher){before_call, after_call, NULL, board_split, NULL};
    return 0;
}

int cg_board_watch(cg_tp *tp)
{
    return cg_tp_watch(tp, (cg_tp_watcher){before_call, after_call, NULL, board_split, NULL});
}

void cg_board_start_rank(cg_board *b, int rank)
{
    my_slot = &b->slots[rank];
    my_slot->pid = (int32_t)getpid();
    my_slot->state = CG_RANK_RUNNING;
    atexit(on_exit_record);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGTERM, SIGINT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], on_fatal_signal);
}

void cg_board_job(int job, const char *case_name)
{
    if (!my_slot)
        return;
    my_slot->job = job;
    my_slot->in_call = 0;
    snprintf(my_slot->case_name, sizeof my_slot->case_name, "%s", case_name);
}

void cg_board_say(const char *line)
{
    fprintf(stderr, "collgrad-check: %s\n", line);
    fflush(stderr);
    if (!my_slot)
        return;
    char *said = my_slot->said;
    size_t at = strnlen(said, sizeof my_slot->said);
    const char *sep = at ? "; " : "";
    if (at + strlen(sep) + strlen(line) >= sizeof my_slot->said)
        return; /* the first messages are the causes; a cut one would mislead */
    snprintf(said + at, sizeof my_slot->said - at, "%s%s", sep, line);
}

void cg_board_mark_remote(cg_board *b, int rank)
{
    if (b->slots && rank >= 0 && rank < b->world && b->slots[rank].state == CG_RANK_IDLE)
        b->slots[rank].state = CG_RANK_REMOTE;
}

void cg_board_done(void)
{
    if (my_slot)
        my_slot->state = CG_RANK_DONE;
}

static int append(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n < len - *at ? (size_t)n : len - *at - 1;
    return 0;
}

/* Ranks stuck in different calls: the hang is a desync; say so first. */
static void describe_desync(const cg_board *b, char *buf, size_t len, size_t *at)
{
    const cg_board_slot *first = NULL;
    for (int r = 0; r < b->world; r++) {
        const cg_board_slot *s = &b->slots[r];
        if (s->state != CG_RANK_RUNNING || !s->in_call)
            continue;
        if (!first) {
            first = s;
            continue;
        }
        if (strcmp(s->entry, first->entry) == 0 && s->ordinal == first->ordinal && s->backward == first->backward)
            continue;
        append(buf, len, at, "desync: rank %d issued %s #%d (%s) while rank %d issued %s #%d (%s); ", r,
               s->entry, s->ordinal, s->backward ? "backward" : "forward", (int)(first - b->slots),
               first->entry, first->ordinal, first->backward ? "backward" : "forward");
        return;
    }
}

/* "all_reduce #2 (backward)": collectives by their ordinal, as --check-sync
 * counts them; send and recv by the program's call. */
static void call_name(const cg_board_slot *s, char *buf, size_t len)
{
    bool p2p = strcmp(s->entry, "send") == 0 || strcmp(s->entry, "recv") == 0;
    snprintf(buf, len, "%s #%d (%s)", s->entry, p2p ? s->seq : s->ordinal, s->backward ? "backward" : "forward");
}

/* Running ranks: the one(s) stopped (outside any call, or inside an
 * earlier call than the rest) are named first, then the ranks waiting
 * inside the latest call for them. */
static void describe_running(const cg_board *b, char *buf, size_t len, size_t *at)
{
    int latest = -1;
    for (int r = 0; r < b->world; r++)
        if (b->slots[r].state == CG_RANK_RUNNING && b->slots[r].in_call && b->slots[r].ordinal > latest)
            latest = b->slots[r].ordinal;
    char waiters[512] = "", what[96] = "";
    size_t wat = 0;
    int nwait = 0;
    double waited = 0;
    for (int r = 0; r < b->world; r++) {
        const cg_board_slot *s = &b->slots[r];
        if (s->state != CG_RANK_RUNNING)
            continue;
        const char *sep = *at && buf[*at - 2] != ';' ? "; " : "";
        char call[64];
        call_name(s, call, sizeof call);
        if (s->in_call && s->ordinal == latest) {
            append(waiters, sizeof waiters, &wat, "%s%d", nwait ? "," : "", r);
            if (!nwait++) {
                snprintf(what, sizeof what, "%s", call);
                waited = now() - s->since;
            }
        } else if (s->in_call) {
            append(buf, len, at, "%srank %d stopped in %s of case %s", sep, r, call, s->case_name);
        } else if (s->before_call) {
            append(buf, len, at, "%srank %d stopped before %s of case %s", sep, r, call, s->case_name);
        } else if (!s->case_name[0]) {
            append(buf, len, at, "%srank %d stopped before its first case", sep, r);
        } else if (s->entry[0]) {
            append(buf, len, at, "%srank %d stopped outside any communication call, after %s of case %s", sep, r,
                   call, s->case_name);
        } else {
            append(buf, len, at, "%srank %d stopped before its first communication call of case %s", sep, r,
                   s->case_name);
        }
    }
    if (nwait) {
        const char *sep = *at && buf[*at - 2] != ';' ? "; " : "";
        append(buf, len, at, "%s%s %s wait%s in %s for %.1f s", sep, nwait > 1 ? "ranks" : "rank", waiters,
               nwait > 1 ? "" : "s", what, waited);
    }
}

/* Ranks on other nodes, which the board cannot see: named, once. */
static void describe_remote(const cg_board *b, char *buf, size_t len, size_t *at)
{
    int n = 0;
    for (int r = 0; r < b->world; r++)
        if (b->slots[r].state == CG_RANK_REMOTE) {
            const char *sep = n ? "," : *at && buf[*at - 2] != ';' ? "; " : "";
            append(buf, len, at, "%s%s%d", sep, n ? "" : "unseen on other nodes: rank ", r);
            n++;
        }
}

static bool any_waiting(const cg_board *b)
{
    for (int r = 0; r < b->world; r++)
        if (b->slots[r].state == CG_RANK_RUNNING && b->slots[r].in_call)
            return true;
    return false;
}

/* What the ranks said before they stopped (cg_board_say), each message once
 * with the ranks that said it: "ranks 0,1 said: X". */
static void describe_said(const cg_board *b, char *buf, size_t len, size_t *at)
{
    for (int r = 0; r < b->world; r++) {
        const char *said = b->slots[r].said;
        bool first = said[0] != '\0';
        for (int q = 0; q < r && first; q++)
            first = strncmp(b->slots[q].said, said, sizeof b->slots[q].said) != 0;
        if (!first)
            continue;
        char who[256] = "";
        size_t wat = 0;
        int n = 0;
        for (int q = r; q < b->world; q++)
            if (strncmp(b->slots[q].said, said, sizeof b->slots[q].said) == 0)
                append(who, sizeof who, &wat, "%s%d", n++ ? "," : "", q);
        const char *sep = *at && buf[*at - 2] != ';' ? "; " : "";
        append(buf, len, at, "%s%s %s said: %.*s", sep, n > 1 ? "ranks" : "rank", who,
               (int)sizeof b->slots[r].said, said);
    }
}

void cg_board_describe(const cg_board *b, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    describe_desync(b, buf, len, &at);
    for (int r = 0; r < b->world; r++) {
        const cg_board_slot *s = &b->slots[r];
        const char *sep = at && buf[at - 2] != ';' ? "; " : "";
        char where[96] = "outside any communication call";
        if (s->in_call || s->before_call) {
            char call[64];
            call_name(s, call, sizeof call);
            snprintf(where, sizeof where, "%s %s", s->in_call ? "in" : "before", call);
        }
        switch (s->state) {
        case CG_RANK_IDLE: append(buf, len, &at, "%srank %d never started", sep, r); break;
        case CG_RANK_DONE: /* its program ended (or failed) without the call the others wait in */
            if (any_waiting(b))
                append(buf, len, &at, "%srank %d finished its jobs", sep, r);
            break;
        case CG_RANK_EXITED: append(buf, len, &at, "%srank %d exited early %s", sep, r, where); break;
        case CG_RANK_SIGNALED:
            append(buf, len, &at, "%srank %d died of signal %d (%s) %s", sep, r, s->signal_no,
                   strsignal(s->signal_no), where);
            break;
        default: break;
        }
    }
    describe_running(b, buf, len, &at);
    describe_remote(b, buf, len, &at);
    describe_said(b, buf, len, &at);
}
