/* comm.h — what the interpreter asks of whoever runs its communication.
 *
 * The interpreter evaluates a program for a set of "slots", each simulating
 * one rank: all W ranks in the oracle, the process's own rank in a worker.
 * Whenever the program communicates or calls backward, it hands every active
 * slot's operand to one cg_comm at once. The oracle's cg_comm turns
 * collectives into plain differentiable ops across slots; a worker's cg_comm
 * runs a rule set over a transport. */
#ifndef CG_COMM_H
#define CG_COMM_H

#include "collectives.h"
#include "ir.h"
#include "tensor.h"

typedef struct cg_comm {
    void *self;
    /* in[s] is slot s's operand (NULL for slots outside the current on-block);
     * fill out[s] for every slot with an operand. Returns 0, or -1 with
     * cg_error(cg_graph_status(g), "expected ..., got ...") — the interpreter adds
     * file:line:col. */
    int (*collective)(void *self, cg_graph *g, const cg_coll *c, cg_tensor **in, cg_tensor **out);
    int (*send)(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *t);
    cg_tensor *(*recv)(void *self, cg_graph *g, const cg_coll *c, int slot);
    /* roots[s] is slot s's root (NULL: no backward call on that rank). */
    int (*backward)(void *self, cg_graph *g, const cg_srcpos *pos, cg_tensor **roots);
    int (*zero_grad)(void *self, cg_graph *g);
    /* The program makes process group `id` (ids count from 0 in program
     * order) of members[0..n), global ranks ascending. Every rank makes every
     * group, member or not, in the same order (MPI_Comm_split's rule). 0, or
     * -1 with the graph's error. */
    int (*group)(void *self, cg_graph *g, int id, const int *members, int n);
    /* Slot `slot` calls c on a group it is not a member of: *out is its
     * input as the framework returns it (design.md section 13), with whatever backward
     * the framework gives it. NULL: a clone that passes the gradient (the
     * truth). 0, or -1 with the graph's error. */
    int (*nonmember)(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *in,
                     cg_tensor **out);
} cg_comm;

#endif
