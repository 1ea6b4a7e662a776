/* transport_nccl.h — private to the "nccl" transport: its instance and the
 * helpers transport_nccl_setup.c gives the entries in transport_nccl.c.
 * Built only with CUDA and NCCL (HAVE_CUDA). */
#ifndef CG_TRANSPORT_NCCL_H
#define CG_TRANSPORT_NCCL_H

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>
#include <stdbool.h>
#include <stddef.h>

#include "transport.h"

struct cg_transport {
    MPI_Comm comm; /* a duplicate of MPI_COMM_WORLD (a group's: its split): start-up, send, recv */
    ncclComm_t nccl;
    cudaStream_t stream;
    int rank, world, device;
    bool broken;             /* a call failed: destroy aborts instead of draining */
    int *one;                /* one device int, for barrier */
    void *stage[2];          /* device copies of host buffers: [0] input, [1] output */
    size_t stage_cap[2];
    bool p2p_nccl; /* send and recv over NCCL (COLLGRAD_NCCL_P2P=nccl), else over MPI */
    struct cgn_mpi_send *msend; /* sends in flight over MPI (transport_nccl_p2p.c) */
    int nmsend, msend_cap;
    struct cgn_self_msg *self; /* under p2p_nccl (transport_nccl_p2p_grouped.c): sends to */
    int nself, self_cap;       /* this rank, not yet received; */
    struct cgn_outgoing *out;  /* sends to other ranks, not yet issued */
    int nout, out_cap;
    cg_status st; /* the last failure: what last_error says */
};

/* ---- errors: 0, or -1 with t->st set (cg_error, status.h) ------------------------ */

/* "<function> failed: <NCCL's or CUDA's text>" from the text of the call. */
int cgn_nccl_check(cg_transport *t, const char *call, ncclResult_t r);
int cgn_cuda_check(cg_transport *t, const char *call, cudaError_t e);
/* NCCL's last message for the communicator after ": " (*sep), or "" and "". */
const char *cgn_detail(const cg_transport *t, const char **sep);
#define NCCL_CALL(t, call) cgn_nccl_check((t), #call, (call))
#define CUDA_CALL(t, call) cgn_cuda_check((t), #call, (call))
/* NCCL's type and element size for dt. */
int cgn_type(cg_transport *t, cgt_dtype dt, ncclDataType_t *type, size_t *size);
/* r names a rank of the world ("root 5 out of range (world 4)" otherwise). */
int cgn_check_rank(cg_transport *t, const char *what, int r);
/* Closes a group whose calls gave rc (0 or -1); the first failure stays the
 * message. */
int cgn_group_end(cg_transport *t, int rc);

/* ---- device views of the caller's buffers (transport_nccl_stage.c) ------------ */

/* Device or managed memory (NCCL can use it); false for host memory. */
bool cgn_on_device(const void *p);

/* The device address of an input: p itself when NCCL can use it (device or
 * managed memory; NULL and 0 bytes too), else a copy in stage slot 0. */
int cgn_dev_in(cg_transport *t, const void *p, size_t bytes, const void **out);
/* The device address of an output: p itself, or stage slot 1 (cgn_finish
 * copies it back). */
int cgn_dev_out(cg_transport *t, void *p, size_t bytes, void **out);
/* An input and an output, one staged buffer when in == out (in place). */
int cgn_dev_pair(cg_transport *t, const void *in, size_t in_bytes, void *out, size_t out_bytes,
                 const void **din, void **dout);
/* Waits for the entry's work on the stream, then copies a staged output
 * (dev != user) back into user. */
int cgn_finish(cg_transport *t, void *user, void *dev, size_t bytes);
/* A device-to-device copy in stream order (a rank's own block). */
int cgn_copy(cg_transport *t, void *dst, const void *src, size_t bytes);

/* The entries the table takes from the other files. */
cg_transport *cgn_create(const char **err);
void cgn_destroy(cg_transport *t);
cg_transport *cgn_split(cg_transport *t, int color, int key, const char **err);
const char *cgn_version(void);

/* ---- send and recv (transport_nccl_p2p.c) ---------------------------------------- */

/* COLLGRAD_NCCL_P2P: unset or "mpi" (false), "nccl" (true); -1 with t->st
 * for anything else. */
int cgn_p2p_mode(cg_transport *t, bool *over_nccl);
int cgn_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag);
int cgn_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag);
/* Every entry but send and recv calls it first: the held NCCL sends go out
 * (p2p_nccl), completed MPI sends are freed (never waited for here). */
int cgn_before_entry(cg_transport *t);
/* For destroy: whatever the sends still hold. */
void cgn_drop_sends(cg_transport *t);
/* cgn_flush_sends (declared in transport.h for cg_tp_settle): every send
 * completed, as at the end of a program. */

/* The NCCL path (transport_nccl_p2p_grouped.c), under p2p_nccl. */
int cgn_grouped_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag);
int cgn_grouped_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag);
int cgn_grouped_flush(cg_transport *t);
void cgn_grouped_drop(cg_transport *t);

#endif
