/* skip_rules.c — an example rule-set plugin whose ranks other than 0 skip
 * one backward collective: the backward of the program's communication call
 * 1 is answered locally (gx = gy) instead of by an all_reduce. The next
 * collective such a rank issues is the backward of call 0: the same entry,
 * dtype, count and root as the one rank 0 is in, so only the program call
 * it serves tells them apart. --check-sync compares that too and reports
 * "desync ... program call 0 ... program call 1" at the call, where a
 * comparison of the other fields would let the ranks pair the two calls and
 * hang at the next one.
 *
 * SKIP_RULES_CALL=N skips program call N instead: with N = 0 on a case of one
 * collective, the skipping rank finishes its program while rank 0 waits in
 * the call, which --check-sync reports as a desync at the end of the program.
 *
 * Run: collgrad-check --check-sync --rules ./libskip_rules.so CASES...  */
#include <stdlib.h>
#include <string.h>

#include "rules.h"

/* The program call whose backward is skipped: 1, or $SKIP_RULES_CALL. */
static int skipped_call(void)
{
    const char *e = getenv("SKIP_RULES_CALL");
    return e && *e ? atoi(e) : 1;
}

static int skip_backward(cg_rule_call *call)
{
    if (call->coll->seq == skipped_call() && call->rank != 0) {
        memcpy(call->gx->data, call->gy->data, (size_t)call->gy->numel * cg_dtype_size(call->gy->dtype));
        return 0;
    }
    return cg_reference_backward(call);
}

static const cg_rules skip_rules = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "example-skip",
    .emulates = "example plugin: ranks other than 0 skip the backward collective of program call 1",
    .see = "examples/rules_plugin/skip_rules.c",
    .wiring = cg_wiring_all_collective,
    .backward = skip_backward,
};

const cg_rules *collgrad_rules(void);
const cg_rules *collgrad_rules(void) { return &skip_rules; }
