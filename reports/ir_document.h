/* ir_document.h — the IR document (schema "collgrad-check/ir/1",
 * python/schema/ir-1.schema.json) that `collgrad-check export-ir` writes and
 * the PyTorch backend hands its ranks: several cases (ir_json.h), each with
 * its plan at a world when one is given, and the tables an interpreter
 * outside the tool checks itself against (the collectives, the ops).
 *
 * A plan is every communication call's seq, kind and every rank's input
 * shape (from the oracle, as the MPI ranks get it), so a rank can pad ragged
 * blocks and size a recv without talking to the others.
 *
 * Ownership: the cJSON trees returned belong to the caller (cJSON_Delete). */
#ifndef CG_IR_DOCUMENT_H
#define CG_IR_DOCUMENT_H

#include "ir.h"
#include "ir_json.h"
#include "oracle.h"

struct cJSON;

/* One case; `plan` (may be NULL) is the oracle's run at the world the plan is
 * for. NULL when out of memory. */
struct cJSON *cg_export_case(const cg_case *cs, const cg_oracle *plan);

/* An empty document for `world` (0: no plan): {"schema", "tool", "world",
 * "collectives", "ops", "cases": []}; add cases to its "cases" array. NULL
 * when out of memory. */
struct cJSON *cg_export_document(int world);

#endif
