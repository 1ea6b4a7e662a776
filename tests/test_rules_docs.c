/* test_rules_docs.c — each rule set states its own backward per (collective,
 * op) in one place (rules.h's docs), and the diagnosis quotes it (issue 26
 * item 2: a static table said "all_reduce backward is the identity" of
 * torch-xla on a PROD all_reduce, where torch_xla computes g * y / x).
 *
 * Every built-in rule set has a statement for every collective and op; the
 * statements that matter are checked against what the cited code does (the
 * source comments of each rules_*.c quote it), not against the tool. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static const char *say(const char *rules, cg_coll_kind kind, cg_redop op, bool *inherited)
{
    const cg_rules *r = cg_rules_find(rules);
    ck_assert_msg(r != NULL, "no rule set %s", rules);
    return cg_rules_describe(r, kind, op, inherited);
}

START_TEST(every_rule_set_says_every_backward)
{
    const cg_rules *r = cg_rules_all()[_i];
    int own = 0;
    for (int k = 0; k < CG_C_COUNT; k++)
        for (int op = 0; op < (cg_coll_has_op((cg_coll_kind)k) ? CG_RED_COUNT : 1); op++) {
            bool inherited;
            const char *what = cg_rules_describe(r, (cg_coll_kind)k, (cg_redop)op, &inherited);
            ck_assert_msg(what && what[0], "%s says nothing of %s(%s)", r->name, cg_coll_name((cg_coll_kind)k),
                          cg_redop_name((cg_redop)op));
            own += !inherited;
        }
    /* an emulation exists because it departs from the reference somewhere */
    ck_assert_msg(own > 0, "%s states no backward of its own", r->name);
}
END_TEST

START_TEST(statements_follow_the_cited_code)
{
    bool inh;
    /* torch_xla AllReduce.backward: REDUCE_SUM returns grad; REDUCE_MUL grad * output / input */
    ck_assert(strstr(say("torch-xla", CG_C_ALL_REDUCE, CG_RED_SUM, &inh), "identity") && !inh);
    const char *prod = say("torch-xla", CG_C_ALL_REDUCE, CG_RED_PROD, &inh);
    ck_assert(!inh && strstr(prod, "y / x") && !strstr(prod, "identity"));
    ck_assert(strstr(say("torch-xla", CG_C_ALL_REDUCE, CG_RED_MAX, &inh), "x == y"));
    /* torch.distributed.nn _AllReduce: the forward's op on g; SUM is the reference */
    ck_assert(strstr(say("torch-nn", CG_C_ALL_REDUCE, CG_RED_PROD, &inh), "all_reduce PROD of g") && !inh);
    ck_assert(strstr(say("torch-nn", CG_C_ALL_REDUCE, CG_RED_SUM, &inh), "all_reduce SUM of g") && inh);
    /* c10d: in-place collectives identity, out-of-place ones no grad_fn */
    ck_assert(strstr(say("c10d", CG_C_ALL_REDUCE, CG_RED_PROD, &inh), "identity"));
    ck_assert(strstr(say("c10d", CG_C_ALL_GATHER, CG_RED_SUM, &inh), "no gradient"));
    /* GatherLayer: grad_out[:] = grads[rank] */
    ck_assert(strstr(say("gatherlayer", CG_C_ALL_GATHER, CG_RED_SUM, &inh), "own slice of the own g"));
    ck_assert(strstr(say("gatherlayer", CG_C_BROADCAST, CG_RED_SUM, &inh), "reduce SUM to the root") && inh);
    /* Horovod reducescatter SUM: grad_output *= size (horovod#2654) */
    ck_assert(strstr(say("horovod", CG_C_REDUCE_SCATTER, CG_RED_SUM, &inh), "W * allgather(g)"));
    /* funcol: only sum */
    ck_assert(strstr(say("torch-funcol", CG_C_ALL_REDUCE, CG_RED_PROD, &inh), "raises") && !inh);
    ck_assert(strstr(say("torch-funcol", CG_C_ALL_REDUCE, CG_RED_MIN, &inh), "#ties") && inh);
    ck_assert(strstr(say("torch-funcol", CG_C_ALL_REDUCE, CG_RED_SUM, &inh), "all_reduce SUM of g") && inh);
    /* Megatron reduce_from: identity backward, SUM only */
    ck_assert(strstr(say("megatron", CG_C_ALL_REDUCE, CG_RED_SUM, &inh), "identity"));
    ck_assert(strstr(say("megatron", CG_C_ALL_REDUCE, CG_RED_MAX, &inh), "[x_i == y]") && inh);
    /* the reference: design.md section 3, PROD exact at zeros */
    ck_assert(strstr(say("reference", CG_C_ALL_REDUCE, CG_RED_PROD, &inh), "prod_{k != i} x_k") && !inh);
}
END_TEST

START_TEST(a_rule_set_without_statements_is_not_described)
{
    cg_rules silent = {.abi_version = CG_RULES_ABI_VERSION, .name = "silent"};
    bool inh = true;
    ck_assert_ptr_null(cg_rules_describe(&silent, CG_C_ALL_REDUCE, CG_RED_SUM, &inh));
    ck_assert(!inh);
}
END_TEST

int main(void)
{
    int n = 0;
    while (cg_rules_all()[n])
        n++;
    Suite *s = suite_create("rules_docs");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, every_rule_set_says_every_backward, 0, n);
    tcase_add_test(tc, statements_follow_the_cited_code);
    tcase_add_test(tc, a_rule_set_without_statements_is_not_described);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
