/* board.h — the status board: a small shared file (mmap) where every rank of
 * a job publishes what it is doing, so that when a rank hangs or dies the
 * launcher can name it: "rank 1 stopped in all_gather #3 (backward) of case
 * X; ranks 0,2,3 wait in all_gather #4 (backward) for 3.0 s". A rank inside
 * a transport call is waiting for a peer; the stuck rank is the one that is
 * outside any call, or inside an earlier one than the others.
 *
 * The board is a file of the launcher's node: ranks on other nodes
 * cannot see it, run without it, and show as "on another node".
 *
 * Writers are the ranks (their own slot only, including from signal
 * handlers: plain stores to mapped memory are async-signal-safe; and one
 * rank marking the remote ones); the reader is the launcher after the job
 * ended or was killed. */
#ifndef CG_BOARD_H
#define CG_BOARD_H

#include <stdint.h>

#include "ir.h"
#include "transport.h"

/* REMOTE: a rank on another node, which cannot see this board (a rank on
 * the launcher's host marks it once the job's bundle went round). */
enum {
    CG_RANK_IDLE,
    CG_RANK_RUNNING,
    CG_RANK_DONE,
    CG_RANK_EXITED,
    CG_RANK_SIGNALED,
    CG_RANK_REMOTE
};

typedef struct cg_board_slot {
    int32_t pid, state, job, exit_code, signal_no;
    int32_t in_call, seq, backward, ordinal;
    int32_t injected;        /* --inject hang/exit fired on this rank */
    int32_t before_call;     /* stopped before entering `entry` (not waiting inside it) */
    char entry[24];
    char case_name[96];
    double since;            /* CLOCK_MONOTONIC seconds when in_call began */
    char said[512];          /* what the rank said before it stopped (cg_board_say) */
} cg_board_slot;

typedef struct cg_board {
    int world;
    cg_board_slot *slots;    /* mapped, after the header */
    void *base;              /* the mapping (header first) */
    size_t bytes;            /* of the mapping */
} cg_board;

/* Create (launcher: zeroed, sized for world) or attach (rank) to the board
 * file. 0, or -1 with st. */
int cg_board_create(cg_board *b, const char *path, int world, cg_status *st);
int cg_board_attach(cg_board *b, const char *path, int world, cg_status *st);
void cg_board_close(cg_board *b);

/* Rank side: publish into slot `rank` and install the exit/signal
 * recorders; then cg_board_watch each transport handle whose calls the slot
 * shows (a watcher stacked on it, transport.h: 0, or -1 with tp->st when tp
 * takes no more watchers). Outside a started rank the watcher does nothing. */
void cg_board_start_rank(cg_board *b, int rank);
int cg_board_watch(cg_tp *tp);
void cg_board_job(int job, const char *case_name); /* a new job starts on this rank */
void cg_board_done(void);                           /* this rank finished its jobs */

/* This rank says `line` (one message, no newline) on stderr and keeps it in
 * its slot, so that the launcher reads it with the rank's end: stderr goes
 * through mpiexec, which may exit (an MPI_Abort) before it forwarded what a
 * rank wrote; a store to the mapped board is in the launcher's file when the
 * rank is gone. Messages after the first are appended while they fit. A rank
 * without a board (another node, a run by hand) says it on stderr alone. */
void cg_board_say(const char *line);

/* Mark slot `rank` as a rank on another node (CG_RANK_REMOTE), unless it
 * started on this board after all. */
void cg_board_mark_remote(cg_board *b, int rank);

/* This rank stops for good before `call` (an injected process fault,
 * process_fault.h): the slot shows the call, outside it, as injected. */
void cg_board_stop_before(const cg_tp_fingerprint *call);

/* Launcher side: describe every rank that did not finish, one sentence. */
void cg_board_describe(const cg_board *b, char *buf, size_t len);

#endif
