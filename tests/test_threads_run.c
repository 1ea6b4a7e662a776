/* test_threads_run.c — the in-process transport and runner
 * (transport_threads.h) that re-run emulations for the diagnosis of real
 * framework runs. Every built-in case at world sizes up to 4 runs under the
 * `reference` rule set on threads and must give the oracle's values and
 * per-rank gradients: the oracle simulates the collectives as plain
 * differentiable ops in one graph, an independent computation of the same
 * numbers. Then the known emulation numbers of the documents (torch-nn's
 * 12/18, gatherlayer's 6/9), an emulation that raises on every rank, and a
 * program whose ranks disagree, which must fail instead of hanging. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_set.h"
#include "judge.h"
#include "threads_run.h"

static const cg_obs_tensor *find(const cg_observed *obs, int rank, const char *name)
{
    for (int i = 0; i < obs->ranks[rank].ntensors; i++)
        if (strcmp(obs->ranks[rank].tensors[i].name, name) == 0)
            return &obs->ranks[rank].tensors[i];
    return NULL;
}

static bool close_to(double want, double have, cg_dtype dt)
{
    double rtol = dt == CG_F64 ? 1e-9 : dt == CG_F32 ? 1e-5 : 2e-2;
    return fabs(want - have) <= rtol * (1.0 + fabs(want));
}

static cg_case *parse(const char *text)
{
    cg_status st = CG_STATUS_OK;
    cg_case *cs = cg_parse_case("inline.case", text, strlen(text), &st);
    ck_assert_msg(cs != NULL, "%s", st.msg);
    return cs;
}

/* Run cs at world under rules; obs is the caller's to free. */
static void run(const cg_case *cs, int world, const char *rules, cg_observed *obs)
{
    cg_oracle *plan = cg_oracle_run(cs, world, false);
    ck_assert_ptr_nonnull(plan);
    ck_assert_msg(plan->st.code == 0, "%s", plan->st.msg);
    cg_status st = CG_STATUS_OK;
    ck_assert_msg(cg_threads_run_rules(cs, plan, cg_rules_find(rules), obs, &st) == 0, "%s", st.msg);
    cg_oracle_free(plan);
}

START_TEST(reference_matches_the_oracle_on_every_builtin_case)
{
    cg_case_set set;
    ck_assert_int_eq(cg_case_set_load(&set, NULL, 0, NULL), 0);
    ck_assert_int_gt(set.n, 20);
    int compared = 0;
    for (int i = 0; i < set.n; i++) {
        const cg_case *cs = set.cases[i];
        for (int k = 0; k < cs->nworlds && cs->worlds[k] <= 4; k++) {
            int w = cs->worlds[k];
            cg_oracle *o = cg_oracle_run(cs, w, false);
            ck_assert_ptr_nonnull(o);
            ck_assert_msg(o->st.code == 0, "%s", o->st.msg);
            cg_observed obs;
            cg_status st = CG_STATUS_OK;
            ck_assert_msg(cg_threads_run_rules(cs, o, &cg_rules_reference, &obs, &st) == 0, "%s", st.msg);
            for (int t = 0; t < o->ntensors; t++) {
                const cg_otensor *ot = &o->tensors[t];
                ck_assert_msg(!obs.ranks[ot->rank].error, "%s W=%d rank %d: %s", cs->name, w, ot->rank,
                              obs.ranks[ot->rank].error);
                const cg_obs_tensor *have = find(&obs, ot->rank, ot->name);
                ck_assert_msg(have && have->numel == ot->numel, "%s W=%d: %s on rank %d", cs->name, w,
                              ot->name, ot->rank);
                for (int64_t e = 0; e < ot->numel; e++) {
                    ck_assert_msg(close_to(ot->value[e], have->value[e], cs->dtype),
                                  "%s W=%d value(%s)[%lld] rank %d: %g, oracle %g", cs->name, w, ot->name,
                                  (long long)e, ot->rank, have->value[e], ot->value[e]);
                    ck_assert_msg(close_to(ot->per_rank[e], have->grad[e], cs->dtype),
                                  "%s W=%d grad(%s)[%lld] rank %d: %g, oracle %g", cs->name, w, ot->name,
                                  (long long)e, ot->rank, have->grad[e], ot->per_rank[e]);
                    compared++;
                }
            }
            cg_observed_free(&obs);
            cg_oracle_free(o);
        }
    }
    ck_assert_int_gt(compared, 500);
    cg_case_set_free(&set);
}
END_TEST

/* pytorch#58005's PRODUCT numbers: torch.distributed.nn gives 12 and 18
 * where the truth is 30 and 30 (design.md section 4). */
START_TEST(torch_nn_reproduces_the_documented_product_numbers)
{
    cg_case *cs = parse("case p\nworld 2\nx = param(ones(1))\nxx = x * (rank + 2)\n"
                        "p = all_reduce(xx, prod)\nbackward(p * (rank + 2))\n");
    cg_observed obs;
    run(cs, 2, "torch-nn", &obs);
    ck_assert_double_eq_tol(find(&obs, 0, "x")->grad[0], 12.0, 1e-12);
    ck_assert_double_eq_tol(find(&obs, 1, "x")->grad[0], 18.0, 1e-12);
    cg_observed_free(&obs);
    cg_case_free(cs);
}
END_TEST

/* Judging in-process, as one library call (judge.h): the PRODUCT case run
 * on threads under torch-nn gives 12 and 18 where the truth is 30 and 30;
 * the checks fail on the gradients and ask for a diagnosis, and with every
 * emulation's run (threads again) the diagnosis names torch-nn. The same
 * case under the reference passes and asks for nothing. No launch. */
/* The threads runner, counted: what the judge asks of the runner it is handed. */
static int runner_calls;
static int counted_run(const cg_case *cs, const cg_oracle *plan, const cg_rules *rules, cg_misorder m,
                       cg_observed *obs, cg_status *st)
{
    runner_calls++;
    return cg_threads_runner.run(cs, plan, rules, m, obs, st);
}
static const cg_emulation_runner counting_runner = {"counted threads", counted_run};

START_TEST(a_case_is_judged_in_process)
{
    cg_case *cs = parse("case p\nworld 2\nx = param(ones(1))\nxx = x * (rank + 2)\n"
                        "p = all_reduce(xx, prod)\nbackward(p * (rank + 2))\n");
    cg_oracle *o = cg_oracle_run(cs, 2, false);
    ck_assert_msg(o && o->st.code == 0, "%s", o ? o->st.msg : "oom");
    cg_report *rep = cg_report_new("distributed", "threads", "torch-nn", "cpu");
    for (int k = 0; k < 2; k++) {
        const char *rules = k == 0 ? "reference" : "torch-nn";
        cg_observed obs;
        cg_status st = CG_STATUS_OK;
        ck_assert_int_eq(cg_threads_run_rules(cs, o, cg_rules_find(rules), &obs, &st), 0);
        cg_case_result *res = cg_report_add_case(rep, cs->name, cs->file, NULL, 2);
        cg_judge_job j = {cs, o, &obs, {rules, false, cg_case_tol(cs, cg_tol_for(cs->dtype)), NULL}, true, true,
                          &counting_runner, NULL, rules};
        runner_calls = 0;
        ck_assert_int_eq(cg_judge(&j, res), 0);
        /* the judge asks its runner for every emulation (each rule set but the
         * reference) and the four misordering hypotheses (W = 2 > 1), and only
         * when a gradient is wrong */
        int emulations = 0;
        for (const cg_rules *const *all = cg_rules_all(); *all; all++)
            emulations += strcmp((*all)->name, "reference") != 0;
        ck_assert_int_le(emulations + 4, CG_MAX_EMULATIONS);
        ck_assert_int_eq(runner_calls, k == 0 ? 0 : emulations + 4);
        cg_case_finish(res);
        ck_assert_int_eq(res->status, k == 0 ? CG_PASS : CG_FAIL);
        bool named = false;
        for (int i = 0; i < res->ndiag; i++)
            named |= strncmp(res->diag_matches[i], "torch-nn", 8) == 0;
        ck_assert_msg(k == 0 ? res->ndiag == 0 : named, "diagnosis: %s",
                      res->diag_explanation ? res->diag_explanation : "(none)");
        cg_observed_free(&obs);
    }
    cg_report_free(rep);
    cg_oracle_free(o);
    cg_case_free(cs);
}
END_TEST

/* Seed 003: GatherLayer's 6 and 9 (per-rank truth 12 and 18). */
START_TEST(gatherlayer_reproduces_seed_003)
{
    cg_case *cs = parse("case g\nworld 2\nx = param(rank == 0 ? ones(2, 2) : zeros(2, 2))\ny = x + 2\n"
                        "z = y * y\nz0, z1 = all_gather(z)\nbackward(mean(z0 * z1))\n");
    cg_observed obs;
    run(cs, 2, "gatherlayer", &obs);
    for (int e = 0; e < 4; e++) {
        ck_assert_double_eq_tol(find(&obs, 0, "y")->grad[e], 6.0, 1e-12);
        ck_assert_double_eq_tol(find(&obs, 1, "y")->grad[e], 9.0, 1e-12);
    }
    cg_observed_free(&obs);
    cg_case_free(cs);
}
END_TEST

/* c10d: a backward through an all_gather alone raises on every rank. */
START_TEST(an_emulation_that_raises_reports_it_on_every_rank)
{
    cg_case *cs = parse("case c\nworld 3\nw = param(ones(1))\ny = w * 2\nys = all_gather(y)\n"
                        "backward(sum(ys))\n");
    cg_observed obs;
    run(cs, 3, "c10d", &obs);
    for (int r = 0; r < 3; r++)
        ck_assert_msg(obs.ranks[r].error && strstr(obs.ranks[r].error, "does not require grad"), "rank %d: %s",
                      r, obs.ranks[r].error ? obs.ranks[r].error : "(no error)");
    cg_observed_free(&obs);
    cg_case_free(cs);
}
END_TEST

/* Point to point over the mailboxes: a ring where every rank sends first. */
START_TEST(a_ring_of_sends_completes)
{
    cg_case *cs = parse("case r\nworld 4\nx = param(full(rank, 2))\nsend(x, (rank + 1) % world)\n"
                        "y = recv((rank + world - 1) % world)\nbackward(sum(y) * (rank + 1))\n");
    cg_observed obs;
    run(cs, 4, "reference", &obs);
    for (int r = 0; r < 4; r++) {
        ck_assert_ptr_null(obs.ranks[r].error);
        ck_assert_double_eq_tol(find(&obs, r, "y")->value[0], (r + 3) % 4, 1e-12);
        ck_assert_double_eq_tol(find(&obs, r, "x")->grad[0], (r + 1) % 4 + 1, 1e-12); /* the receiver's rank + 1 */
    }
    cg_observed_free(&obs);
    cg_case_free(cs);
}
END_TEST

/* A rule set whose backward fails on rank 1 only: rank 0 enters the
 * backward all_reduce and must be released with an error, not left waiting. */
static int fails_on_rank_1(cg_rule_call *call)
{
    if (call->rank == 1)
        return cg_error(call->st, "refused on rank 1");
    return cg_reference_backward(call);
}

static const cg_rules rank_1_fails = {
    .abi_version = CG_RULES_ABI_VERSION,
    .name = "rank-1-fails",
    .wiring = cg_wiring_all_collective,
    .backward = fails_on_rank_1,
};

START_TEST(ranks_waiting_for_a_failed_rank_are_released)
{
    cg_case *cs = parse("case f\nworld 2\nx = param(ones(2))\ns = all_reduce(x, sum)\nbackward(sum(s))\n");
    cg_oracle *plan = cg_oracle_run(cs, 2, false);
    ck_assert_ptr_nonnull(plan);
    cg_observed obs;
    ck_assert_int_eq(cg_threads_run_rules(cs, plan, &rank_1_fails, &obs, NULL), 0);
    ck_assert_msg(obs.ranks[1].error && strstr(obs.ranks[1].error, "refused on rank 1"), "rank 1: %s",
                  obs.ranks[1].error ? obs.ranks[1].error : "(none)");
    ck_assert_msg(obs.ranks[0].error && strstr(obs.ranks[0].error, "rank 1 failed"), "rank 0: %s",
                  obs.ranks[0].error ? obs.ranks[0].error : "(none)");
    cg_observed_free(&obs);
    cg_oracle_free(plan);
    cg_case_free(cs);
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *s = suite_create("threads_run");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, reference_matches_the_oracle_on_every_builtin_case);
    tcase_add_test(tc, torch_nn_reproduces_the_documented_product_numbers);
    tcase_add_test(tc, a_case_is_judged_in_process);
    tcase_add_test(tc, gatherlayer_reproduces_seed_003);
    tcase_add_test(tc, an_emulation_that_raises_reports_it_on_every_rank);
    tcase_add_test(tc, a_ring_of_sends_completes);
    tcase_add_test(tc, ranks_waiting_for_a_failed_rank_are_released);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(threads_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
