/* backend_pytorch.h — real PyTorch as the backend under test
 * (--backend pytorch:API, design.md section 12).
 *
 * The C parser stays the only parser: each world size's cases are exported
 * as IR (export_ir.h), W Python ranks (python/collgrad_torch) interpret them
 * with real torch ops and one of PyTorch's distributed APIs over a process
 * group (--torch-backend), and write what they produced per job. This side
 * launches them (RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1, a FileStore in the
 * run's private directory; as root, in a private network namespace with only
 * the loopback interface), enforces the same per-job deadline as MPI runs,
 * prints the same progress line, and judges every job with the same oracle,
 * diff and diagnosis, so the JSON, JUnit and compare work unchanged.
 *
 * Outcomes per rank: values and gradients (wrong numbers are diagnosed
 * against every emulation, re-run in this process over threads); "the
 * framework refused" (exception type and message, at forward or backward);
 * warnings the framework emitted; hangs (a collective that timed out, or a
 * rank the deadline killed); jobs skipped with the reason (an API or torch
 * version without the op). */
#ifndef CG_BACKEND_PYTORCH_H
#define CG_BACKEND_PYTORCH_H

#include <stdbool.h>
#include <stddef.h>

#include "case_set.h"
#include "cli.h"
#include "result.h"

/* The APIs of --backend pytorch:API: the i-th one's name, NULL past the last. */
const char *cg_pytorch_api(int i);
bool cg_pytorch_api_known(const char *api);

/* The APIs of --backend jax:API (shard_map, shard_map_novma): the i-th one's
 * name, NULL past the last; whether a --backend names JAX. */
const char *cg_jax_api(int i);
bool cg_backend_is_jax(const char *backend);

/* Options that make no sense with --backend (or the other way round):
 * 0, or CG_EXIT_USAGE after printing why. */
int cg_pytorch_check_options(cg_options *o); /* a refusal is also kept in o->usage */

/* Whether an error a rank raised echoes another rank's stop rather than
 * causing anything: gloo's "Connection closed by peer" once a peer's process
 * ended, a timeout waiting for a peer. A hang is explained by the other
 * error, or by none. */
bool cg_pytorch_error_is_echo(const char *message);

/* What --backend pytorch:API needs before a rank starts: an interpreter that
 * imports torch (--python, $COLLGRAD_PYTHON, /usr/bin/python3, python3) and
 * the collgrad_torch package. 0, or CG_EXIT_INFRA with st saying what is
 * missing (explore asks before drawing a program). */
int cg_pytorch_preflight(const cg_options *o, cg_status *st);

/* Run every job (case x world) with real PyTorch ranks into rep. Returns the
 * exit status (cli.h): 3 when no interpreter with torch can be found or the
 * ranks cannot start, else what the results call for. */
int cg_run_pytorch(const cg_options *o, const cg_case_set *set, cg_report *rep);

#endif
