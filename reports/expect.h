/* expect.h — turning a case's expectations into checks.
 *
 * An expectation applies at world W when it is written as W per-rank lists,
 * or as "= EXPR" / "undefined" (any world). Truth expectations (no rules=)
 * are checked against the oracle, which validates the oracle against the
 * documents' numbers; rules=NAME expectations are checked against a
 * distributed run under rule set NAME. */
#ifndef CG_EXPECT_H
#define CG_EXPECT_H

#include "ir.h"
#include "oracle.h"
#include "result.h"

bool cg_expect_applies(const cg_expect *x, int world);

/* The expected values of x on `rank` for a tensor of numel elements, in a
 * malloc'd array; NULL with st on a count mismatch or evaluation error. An
 * "= EXPR" is evaluated in o's kept run (o NULL: the program runs again). */
double *cg_expect_values(const cg_oracle *o, const cg_case *cs, const cg_expect *x, int world, int rank,
                         int64_t numel, cg_status *st);

/* The oracle's values of one semantics for a tensor (NULL: undefined). */
const double *cg_oracle_values(const cg_otensor *t, cg_semantics sem, bool value);

/* Oracle-only verdict of one case at one world: truth expectations against
 * the oracle and the finite-difference agreement. */
void cg_check_oracle(const cg_case *cs, const cg_oracle *o, cg_case_result *res);

/* Hang hazards of cs at plan's world, as warnings on res (hazards.h). */
void cg_check_hazards(const cg_case *cs, const cg_oracle *plan, cg_case_result *res);

/* The tolerance a case asks for (its "tolerance" line), else tol_default. */
cg_tol cg_case_tol(const cg_case *cs, cg_tol tol_default);

#endif
