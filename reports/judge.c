/* judge.c — one job's checks and diagnosis, and the emulations' runs the
 * diagnosis compares with (judge.h). */
#include "judge.h"

#include <string.h>

int cg_emulations_run(const cg_emulation_runner *runner, const cg_case *cs, const cg_oracle *plan,
                      const char *first, cg_emulations *out)
{
    memset(out, 0, sizeof *out);
    const cg_rules *const *all = cg_rules_all();
    const cg_misorder in_order = {CG_MISORDER_NONE, 0};
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; all[i] && out->n < CG_MAX_EMULATIONS; i++) {
            bool is_first = first && strcmp(all[i]->name, first) == 0;
            if (strcmp(all[i]->name, "reference") == 0 || is_first != (pass == 0))
                continue;
            bool ok = runner->run(cs, plan, all[i], in_order, &out->obs[out->n], NULL) == 0;
            out->runs[out->n] = (cg_rule_run){all[i]->name, ok ? &out->obs[out->n] : NULL};
            out->n++;
        }
    /* a transport that misorders: the gradient face of wrong_rank_order where a
     * local term adds to the misordered part (no permutation of the truth shows it) */
    static const cg_misorder hypotheses[] = {{CG_MISORDER_REDUCE_SCATTER, -1}, {CG_MISORDER_REDUCE_SCATTER, 1},
                                             {CG_MISORDER_ALL_GATHER, -1}, {CG_MISORDER_ALL_GATHER, 1}};
    const cg_rules *reference = cg_rules_find("reference");
    for (size_t h = 0; plan->world > 1 && h < sizeof hypotheses / sizeof hypotheses[0] &&
                       out->n < CG_MAX_EMULATIONS; h++) {
        bool ok = runner->run(cs, plan, reference, hypotheses[h], &out->obs[out->n], NULL) == 0;
        out->runs[out->n] = (cg_rule_run){"wrong_rank_order", ok ? &out->obs[out->n] : NULL};
        out->n++;
    }
    return out->n;
}

void cg_emulations_free(cg_emulations *e)
{
    for (int i = 0; i < e->n; i++)
        cg_observed_free(&e->obs[i]);
    e->n = 0;
}


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

void cg_judge_diagnose(const cg_judge_job *j, cg_judge_need need, const cg_emulations *runs,
                       cg_case_result *res)
{
    if (need == CG_JUDGE_NO_DIAGNOSIS || !j->obs)
        return;
    bool gradients = need == CG_JUDGE_GRADIENTS_WRONG;
    (void)cg_oracle_add_per_root(j->cs, j->o); /* own_loss is one explanation; a failure only drops it */
    int w = j->o->world;
    cg_oracle *st = gradients ? cg_oracle_run_mode(j->cs, w, CG_SIM_STRAIGHT_THROUGH) : NULL;
    cg_oracle *ls = gradients ? cg_oracle_run_mode(j->cs, w, CG_SIM_LOCAL_SLOT) : NULL;
    cg_diag_inputs in = {j->cs, j->o, st && !st->st.code ? st : NULL, ls && !ls->st.code ? ls : NULL, j->obs,
                         j->label, runs ? runs->runs : NULL, gradients && runs ? runs->n : 0, j->diff.tol};
    cg_diagnose(&in, res);
    cg_oracle_free(st);
    cg_oracle_free(ls);
}

int cg_judge(const cg_judge_job *j, cg_case_result *res)
{
    cg_judge_need need;
    int error_class = cg_judge_check(j, res, &need);
    if (need == CG_JUDGE_NO_DIAGNOSIS)
        return error_class;
    cg_emulations runs = {0};
    if (need == CG_JUDGE_GRADIENTS_WRONG && j->runner)
        cg_emulations_run(j->runner, j->cs, j->o, j->first, &runs);
    cg_judge_diagnose(j, need, &runs, res);
    cg_emulations_free(&runs);
    return error_class;
}
