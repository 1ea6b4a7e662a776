/* export_ir.h — a parsed case as JSON (schema "collgrad-check/ir/1",
 * python/schema/ir-1.schema.json), for interpreters outside this process:
 * the C parser stays the only parser of the case language, and the real
 * framework's ranks (python/collgrad_torch) run exactly what it produced.
 *
 * One document holds several cases. With a world size it also carries each
 * case's plan at that world: every communication call's seq, kind and every
 * rank's input shape (from the oracle, as the MPI ranks get it), so a rank
 * can pad ragged blocks and size a recv without talking to the others.
 * Every communication call in the program carries its seq: the index of the
 * call in the interpreter's evaluation order (postorder, every branch and
 * on-block counted whether a rank takes it or not), which is what the plan is
 * keyed by. Every rand/randn call carries the name its values are keyed by
 * ("NAME#DRAW": the statement's first assigned name, or "stmt", and the
 * call's index among the statement's draws), so another implementation of
 * harness/autograd/rng.c draws the same inputs.
 *
 * Ownership: the cJSON trees returned belong to the caller (cJSON_Delete). */
#ifndef CG_EXPORT_IR_H
#define CG_EXPORT_IR_H

#include <stddef.h>

#include "ir.h"
#include "oracle.h"

#define CG_IR_SCHEMA "collgrad-check/ir/1"

struct cJSON;

/* One case; `plan` (may be NULL) is the oracle's run at the world the plan is
 * for. NULL when out of memory. */
struct cJSON *cg_export_case(const cg_case *cs, const cg_oracle *plan);

/* An empty document for `world` (0: no plan): {"schema", "tool", "world",
 * "cases": []}; add cases to its "cases" array. NULL when out of memory. */
struct cJSON *cg_export_document(int world);

/* `collgrad-check export-ir [--world N] [--output FILE] [CASE|DIR]...`:
 * argv[0] is "export-ir". Returns the exit status (cli.h): 2 for bad usage,
 * a bad case file or a program the oracle refuses at that world, 3 when the
 * output cannot be written. */
int cg_export_ir_main(int argc, char **argv);

#endif
