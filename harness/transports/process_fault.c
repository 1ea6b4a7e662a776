/* process_fault.c — see process_fault.h. */
#include "process_fault.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board.h"
#include "transport_fault.h"

int cg_process_fault_parse(const char *spec, cg_process_fault *f, cg_status *st)
{
    int rank = -1;
    memset(f, 0, sizeof *f);
    bool hang = strncmp(spec, "hang:", 5) == 0, exit_ = strncmp(spec, "exit:", 5) == 0;
    if ((!hang && !exit_) || cg_fault_tail_parse(spec + 4, &rank, f->filter, sizeof f->filter) != 0)
        return cg_error(st, "expected --inject hang:RANK[:CASE] or exit:RANK[:CASE], got '%s'", spec);
    f->kind = hang ? CG_PFAULT_HANG : CG_PFAULT_EXIT;
    f->rank = rank;
    return 0;
}

/* Before any call of the chosen rank in a matching job: stop there for good.
 * The board (if any) first shows the call the rank stopped before; its peers
 * wait inside it, which is what the launcher must then name. */
static int before_call(void *self, cg_tp *tp, const cg_tp_fingerprint *call)
{
    const cg_process_fault *f = self;
    (void)tp;
    if (f->me != f->rank || !f->case_name || (f->filter[0] && !strstr(f->case_name, f->filter)))
        return 0;
    cg_board_stop_before(call);
    if (f->kind == CG_PFAULT_EXIT)
        exit(7); /* the board's exit handler records it */
    for (;;)
        pause(); /* an injected hang: only a signal ends it */
}

/* A group's calls are this rank's calls too: the same watcher follows. */
static int follow_split(void *self, cg_tp *tp, int color, int key, cg_tp_watcher *child)
{
    (void)tp, (void)color, (void)key;
    *child = (cg_tp_watcher){before_call, NULL, self, follow_split, NULL};
    return 0;
}

int cg_process_fault_install(cg_tp *tp, cg_process_fault *f)
{
    f->me = tp->rank;
    return cg_tp_watch(tp, (cg_tp_watcher){before_call, NULL, f, follow_split, NULL});
}

void cg_process_fault_set_case(cg_process_fault *f, const char *case_name) { f->case_name = case_name; }
