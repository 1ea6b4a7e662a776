/* test_explore_class.c — how explore classes a failing program from its
 * report (cg_explore_report_classes), through the real diff and report
 * writer: a backend whose forward hands a rank a value of another shape (what
 * torch.distributed.nn.scatter does off its group: one chunk of
 * torch.empty_like, tests/data/nonmember_scatter.case) is the class "shape",
 * and one that only gets a number wrong stays "unknown" (the observed runs
 * are the reference's on threads, altered here the way such a backend errs);
 * a hang is named by the error a rank raised, where the report keeps one. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"
#include "explore_class.h"
#include "observed.h"
#include "oracle.h"
#include "ir.h"
#include "report_json.h"
#include "rules.h"
#include "threads_run.h"

/* W = 3; y on rank 1, off the group, is x: 6 elements. */
static const char *const program = "case nonmember\n"
                                   "worlds 3\n"
                                   "g = group([0, 2])\n"
                                   "x = param([1, 2, 3, 4, 5, 6])\n"
                                   "y = scatter(x, 0, group=g)\n"
                                   "backward(sum(x * x))\n";

static cg_obs_tensor *find(cg_observed *obs, int rank, const char *name)
{
    for (int i = 0; i < obs->ranks[rank].ntensors; i++)
        if (strcmp(obs->ranks[rank].tensors[i].name, name) == 0)
            return &obs->ranks[rank].tensors[i];
    return NULL;
}

/* y on rank 1 cut to one chunk (3 elements), as the real module returns. */
static void to_one_chunk(cg_obs_tensor *y)
{
    y->numel = 3;
    y->shape[0] = 3;
}

/* y's first element on rank 1 off by one: the shape the oracle's. */
static void off_by_one(cg_obs_tensor *y) { y->value[0] += 1.0; }

static void record(const char *name, const char *cls, void *ctx)
{
    (void)name;
    snprintf((char *)ctx, CG_CLASS_LEN, "%s", cls);
}

/* The class of rep's one case as explore reads it: written by the report
 * writer to a temporary file, read back by cg_explore_report_classes. Frees
 * rep. */
static void class_of_report(cg_report *rep, char cls[CG_CLASS_LEN])
{
    cg_status st = CG_STATUS_OK;
    char path[] = "/tmp/cg_explore_class_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(cg_report_write_json(rep, path, &st) == 0, "%s", st.msg);
    cls[0] = '\0';
    ck_assert_int_eq(cg_explore_report_classes(path, false, record, cls), 0);
    unlink(path);
    cg_report_free(rep);
}

/* The class of the program once `alter` has changed rank 1's y, and the
 * failing note of y on rank 1 into note. */
static void class_of(void (*alter)(cg_obs_tensor *), char cls[CG_CLASS_LEN], char *note, size_t len)
{
    cg_status st = CG_STATUS_OK;
    cg_case *cs = cg_parse_case("nonmember.case", program, strlen(program), &st);
    ck_assert_msg(cs, "%s", st.msg);
    cg_oracle *o = cg_oracle_run(cs, 3, false);
    ck_assert_msg(o && !o->st.code, "%s", o ? o->st.msg : "oracle: out of memory");
    const cg_rules *rs = cg_rules_load("reference", &st);
    ck_assert_ptr_nonnull(rs);
    cg_observed obs;
    memset(&obs, 0, sizeof obs);
    ck_assert_msg(cg_threads_run_rules(cs, o, rs, &obs, &st) == 0, "%s", st.msg);
    cg_obs_tensor *y = find(&obs, 1, "y");
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->numel, 6);
    alter(y);

    cg_report *rep = cg_report_new("distributed", "mpi", "pytorch:nn", "cpu");
    cg_case_result *res = cg_report_add_case(rep, cs->name, cs->file, NULL, 3);
    cg_diff_opts opts = {"pytorch:nn", false, cg_tol_for(cs->dtype), NULL};
    cg_diff_distributed(cs, o, &obs, &opts, res);
    cg_case_finish(res);
    note[0] = '\0';
    for (int i = 0; i < res->nchecks; i++)
        if (res->checks[i].rank == 1 && strcmp(res->checks[i].tensor, "y") == 0 &&
            res->checks[i].status == CG_FAIL && res->checks[i].note)
            snprintf(note, len, "%s", res->checks[i].note);
    class_of_report(rep, cls);
    cg_observed_free(&obs);
    cg_oracle_free(o);
    cg_case_free(cs);
}

START_TEST(another_shape_is_its_own_class)
{
    char cls[CG_CLASS_LEN], note[512];
    class_of(to_one_chunk, cls, note, sizeof note);
    ck_assert_str_eq(cls, "shape: a value's shape differs from the oracle's");
    ck_assert_str_eq(note, "the distributed run's value has shape [3] (3 elements), the oracle's [6] (6): "
                           "its value and gradient cannot be compared");
}
END_TEST

START_TEST(a_wrong_number_stays_unknown)
{
    char cls[CG_CLASS_LEN], note[512];
    class_of(off_by_one, cls, note, sizeof note);
    ck_assert_str_eq(cls, "unknown");
}
END_TEST

/* The class of a job that hung, from its report: the message the PyTorch
 * backend writes (backend_pytorch_judge.c), with rank 1's own error beside it
 * when `raised` (as that backend keeps it), and the case's hang hazards when
 * `hazards` (the real analysis, as every backend's judge adds them). Only
 * rank 0 calls backward, so rank 1 never reaches the gather's backward. */
static void hang_class(const char *raised, bool hazards, const char *match, char cls[CG_CLASS_LEN])
{
    static const char *const only_rank0 = "case gather_rank0\n"
                                          "worlds 2\n"
                                          "x = param([1, 2])\n"
                                          "y = gather(x, 0)\n"
                                          "on 0 {\n"
                                          "  backward(sum(y * y))\n"
                                          "}\n";
    cg_status st = CG_STATUS_OK;
    cg_case *cs = cg_parse_case("r.case", only_rank0, strlen(only_rank0), &st);
    ck_assert_msg(cs, "%s", st.msg);
    cg_oracle *o = cg_oracle_run(cs, 2, false);
    ck_assert_msg(o && !o->st.code, "%s", o ? o->st.msg : "oracle: out of memory");
    cg_report *rep = cg_report_new("distributed", "pytorch", "pytorch:c10d", "cpu");
    cg_case_result *res = cg_report_add_case(rep, "gather_rank0", "r.case", NULL, 2);
    ck_assert_ptr_nonnull(res);
    res->status = CG_ERROR;
    res->message = strdup(raised ? "hang: rank 0 timed out at backward (r.case:6:3): RuntimeError: Timed out "
                                   "waiting 1500ms for recv operation to complete; rank 1 raised at backward "
                                   "(r.case:6:3): RuntimeError: element 0 of tensors does not require grad and "
                                   "does not have a grad_fn"
                                 : "hang: rank 0 timed out at backward (r.case:6:3): RuntimeError: Timed out "
                                   "waiting 1500ms for send operation to complete; rank 1 finished the job");
    if (raised)
        cg_case_add_note(res, "", 1, "error", "pytorch:c10d", CG_FAIL, raised);
    if (hazards)
        cg_check_hazards(cs, o, res);
    if (match) /* as the PyTorch backend's diagnosis of a hang names an emulation raising alike */
        cg_case_set_diagnosis(res, &match, 1, "matches rule set c10d: it raises the same error", NULL);
    class_of_report(rep, cls);
    cg_oracle_free(o);
    cg_case_free(cs);
}

static const char *const own_error = "r.case:6:3: RuntimeError at backward: element 0 of tensors does not "
                                     "require grad and does not have a grad_fn";

START_TEST(a_hang_is_named_by_the_error_that_caused_it)
{
    char cls[CG_CLASS_LEN];
    hang_class(own_error, true, NULL, cls); /* the location dropped, as it moves while the program shrinks */
    ck_assert_str_eq(cls, "raises: RuntimeError at backward: element 0 of tensors does not "
                          "require grad and does not have a grad_fn");
    hang_class(own_error, true, "c10d", cls); /* an emulation raises there too: the hang is what it models */
    ck_assert_str_eq(cls, "matches c10d");
    hang_class(NULL, false, NULL, cls);
    ck_assert_str_eq(cls, "hangs");
}
END_TEST

START_TEST(a_hang_the_analysis_foresaw_is_named_by_it)
{
    char cls[CG_CLASS_LEN];
    hang_class(NULL, true, NULL, cls);
    ck_assert_str_eq(cls, "hangs as the hazard analysis predicts: a rank never reaches the backward of a "
                          "collective that others run");
    /* a rank's error that only echoes another's stop (gloo, once a peer's process ended) is no cause */
    hang_class("r.case:6:3: RuntimeError at backward: [./gloo/transport/tcp/pair.cc:598] Connection closed by "
               "peer [127.0.0.1]:28562", true, NULL, cls);
    ck_assert_str_eq(cls, "hangs as the hazard analysis predicts: a rank never reaches the backward of a "
                          "collective that others run");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("explore_class");
    TCase *tc = tcase_create("class");
    tcase_add_test(tc, another_shape_is_its_own_class);
    tcase_add_test(tc, a_wrong_number_stays_unknown);
    tcase_add_test(tc, a_hang_is_named_by_the_error_that_caused_it);
    tcase_add_test(tc, a_hang_the_analysis_foresaw_is_named_by_it);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
