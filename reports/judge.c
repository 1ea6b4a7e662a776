/* judge.c — one job's checks and diagnosis (judge.h). */
#include "judge.h"


int cg_judge_check(const cg_judge_job *j, cg_case_result *res, cg_judge_need *need)
{
    int error_class = 0;
    *need = CG_JUDGE_NO_DIAGNOSIS;
    if (!j->diff.expect_only) { /* an emulation job of the default run checks its own rules= lines only */
        cg_oracle *checked = j->fd ? cg_oracle_run(j->cs, j->o->world, true) : NULL;
        const cg_oracle *truth = checked ? checked : j->o;
        cg_check_oracle(j->cs, truth, res);
        if (res->status == CG_ERROR && truth->st.code) /* e.g. a NaN objective */
            res->error_class = error_class = truth->st.code;
        cg_oracle_free(checked);
        cg_check_hazards(j->cs, j->o, res);
    }
    if (!j->obs)
        return error_class;
    cg_diff_distributed(j->cs, j->o, j->obs, &j->diff, res);
    bool values_wrong;
    if (!j->diff.expect_only && j->diagnose && cg_diag_needed(res, j->obs, &values_wrong))
        *need = values_wrong ? CG_JUDGE_VALUES_WRONG : CG_JUDGE_GRADIENTS_WRONG;
    return error_class;
}

void cg_judge_diagnose(const cg_judge_job *j, cg_judge_need need, const cg_rule_run *runs, int n,
                       const char *label, cg_case_result *res)
{
    if (need == CG_JUDGE_NO_DIAGNOSIS || !j->obs)
        return;
    bool gradients = need == CG_JUDGE_GRADIENTS_WRONG;
    (void)cg_oracle_add_per_root(j->cs, j->o); /* own_loss is one explanation; a failure only drops it */
    int w = j->o->world;
    cg_oracle *st = gradients ? cg_oracle_run_mode(j->cs, w, CG_SIM_STRAIGHT_THROUGH) : NULL;
    cg_oracle *ls = gradients ? cg_oracle_run_mode(j->cs, w, CG_SIM_LOCAL_SLOT) : NULL;
    cg_diag_inputs in = {j->cs, j->o, st && !st->st.code ? st : NULL, ls && !ls->st.code ? ls : NULL, j->obs,
                         label, runs, gradients ? n : 0, j->diff.tol};
    cg_diagnose(&in, res);
    cg_oracle_free(st);
    cg_oracle_free(ls);
}
