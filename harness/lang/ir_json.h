/* ir_json.h — a parsed case as JSON (schema "collgrad-check/ir/1",
 * python/schema/ir-1.schema.json), for interpreters outside this process:
 * the C parser stays the only parser of the case language, and the real
 * framework's ranks (python/collgrad_torch) run exactly what it produced.
 * A document of several cases, with their plans at a world and the tables an
 * interpreter checks itself against, is reports/ir_document.h's.
 *
 * Every communication call in the program carries its seq: the index of the
 * call in the interpreter's evaluation order (postorder, every branch and
 * on-block counted whether a rank takes it or not), which is what a plan is
 * keyed by. Every rand/randn call carries the name its values are keyed by
 * ("NAME#DRAW": the statement's first assigned name, or "stmt", and the
 * call's index among the statement's draws), so another implementation of
 * harness/autograd/rng.c draws the same inputs.
 *
 * Ownership: the cJSON trees returned belong to the caller (cJSON_Delete). */
#ifndef CG_IR_JSON_H
#define CG_IR_JSON_H

#include "ir.h"

#define CG_IR_SCHEMA "collgrad-check/ir/1"

struct cJSON;

/* One case: its header (name, file, source, worlds, dtype, seed, tolerances),
 * its program and "ncomm", the number of communication calls. NULL when out
 * of memory. */
struct cJSON *cg_ir_case_json(const cg_case *cs);

/* The op table (op_table.h) by name. NULL when out of memory. */
struct cJSON *cg_ir_ops_json(void);

#endif
