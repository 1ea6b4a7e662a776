/* matrix.c — see matrix.h. The cells are read from the cJSON trees of the
 * reports (as compare.c reads them): a report may come from another run of
 * the tool, so nothing is rebuilt that would need every field. */
#include "matrix.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"

cg_matrix *cg_matrix_new(int ncols)
{
    cg_matrix *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->ncols = ncols;
    m->cols = calloc((size_t)ncols + 1, sizeof *m->cols);
    m->col_notes = calloc((size_t)ncols + 1, sizeof *m->col_notes);
    if (!m->cols || !m->col_notes) {
        cg_matrix_free(m);
        return NULL;
    }
    return m;
}

void cg_matrix_free(cg_matrix *m)
{
    if (!m)
        return;
    for (int c = 0; c < m->ncols; c++) {
        if (m->cols)
            free(m->cols[c]);
        if (m->col_notes)
            free(m->col_notes[c]);
    }
    for (int r = 0; r < m->nrows; r++) {
        free(m->rows[r].name);
        free(m->rows[r].file);
        for (int c = 0; c < m->ncols; c++) {
            free(m->cells[(size_t)r * m->ncols + c].text);
            free(m->cells[(size_t)r * m->ncols + c].detail);
            free(m->cells[(size_t)r * m->ncols + c].via);
        }
    }
    for (int i = 0; i < m->nnotes; i++)
        free(m->notes[i]);
    free(m->notes);
    free(m->rows);
    free(m->cells);
    free(m->cols);
    free(m->col_notes);
    free(m);
}

int cg_matrix_add_note(cg_matrix *m, const char *line)
{
    char **notes = realloc(m->notes, (size_t)(m->nnotes + 1) * sizeof *notes);
    if (!notes)
        return -1;
    m->notes = notes;
    return (m->notes[m->nnotes] = strdup(line)) ? (m->nnotes++, 0) : -1;
}

const cg_cell *cg_matrix_cell(const cg_matrix *m, int row, int col)
{
    return &m->cells[(size_t)row * m->ncols + col];
}

const char *cg_cell_word(cg_cell_kind k)
{
    static const char *const words[] = {"-",     "correct", "wrong",  "refused",
                                        "hangs", "error",   "skipped"};
    return (unsigned)k < sizeof words / sizeof words[0] ? words[k] : "?";
}

void cg_cell_head(const cg_cell *c, char *buf, size_t len)
{
    const char *via = c->via && c->kind != CG_CELL_ABSENT ? c->via : NULL;
    if (c->kind == CG_CELL_WRONG)
        snprintf(buf, len, "wrong (%.2g)%s%s", c->max_err, via ? " via " : "", via ? via : "");
    else
        snprintf(buf, len, "%s%s%s", cg_cell_word(c->kind), via ? " via " : "", via ? via : "");
}

void cg_cell_summary(const cg_cell *c, char *buf, size_t len)
{
    cg_cell_head(c, buf, len);
    size_t at = strlen(buf);
    if (c->text && c->kind != CG_CELL_WRONG && c->kind != CG_CELL_CORRECT && c->kind != CG_CELL_ABSENT &&
        at < len)
        snprintf(buf + at, len - at, ": %s", c->text);
}

/* ---- one column ------------------------------------------------------------ */

static int find_row(cg_matrix *m, const char *name, const char *file, int world)
{
    for (int r = 0; r < m->nrows; r++)
        if (m->rows[r].world == world && strcmp(m->rows[r].name, name) == 0)
            return r;
    if (m->nrows == m->caprows) {
        int cap = m->caprows ? 2 * m->caprows : 32;
        cg_matrix_row *rows = realloc(m->rows, (size_t)cap * sizeof *rows);
        if (!rows)
            return -1;
        m->rows = rows;
        cg_cell *cells = realloc(m->cells, (size_t)cap * m->ncols * sizeof *cells);
        if (!cells)
            return -1;
        m->cells = cells;
        m->caprows = cap;
    }
    cg_matrix_row *row = &m->rows[m->nrows];
    row->name = strdup(name);
    row->file = strdup(file ? file : "");
    row->world = world;
    if (!row->name || !row->file) {
        free(row->name);
        free(row->file);
        return -1;
    }
    memset(&m->cells[(size_t)m->nrows * m->ncols], 0, (size_t)m->ncols * sizeof *m->cells);
    return m->nrows++;
}

/* WRONG: the largest error and the first failing checks' numbers. */
static int wrong_cell(cg_cell *cell, const cJSON *checks)
{
    char detail[2048] = "", e[256], o[256];
    size_t at = 0;
    int shown = 0;
    const cJSON *k;
    cell->kind = CG_CELL_WRONG;
    cJSON_ArrayForEach(k, checks)
    {
        const char *st = cg_json_str(k, "status");
        if (!st || strcmp(st, "fail") != 0)
            continue;
        double err = cg_json_num(k, "max_abs_err", 0);
        if (err > cell->max_err || isnan(err))
            cell->max_err = err;
        if (shown++ >= 4 || at >= sizeof detail)
            continue;
        cg_json_numbers_text(cJSON_GetObjectItemCaseSensitive(k, "expected"), 6, 6, e, sizeof e);
        cg_json_numbers_text(cJSON_GetObjectItemCaseSensitive(k, "observed"), 6, 6, o, sizeof o);
        const char *note = cg_json_str(k, "note");
        at += (size_t)snprintf(detail + at, sizeof detail - at,
                               "%s%s(%s) rank %d: expected %s observed %s%s%s", at ? "; " : "",
                               cg_json_str(k, "semantics") ? cg_json_str(k, "semantics") : "?",
                               cg_json_str(k, "tensor") ? cg_json_str(k, "tensor") : "",
                               cg_json_int(k, "rank", -1), e, o, note && *note ? " - " : "",
                               note && *note ? note : "");
    }
    if (shown > 4 && at < sizeof detail)
        snprintf(detail + at, sizeof detail - at, "; and %d more", shown - 4);
    if (detail[0] && !(cell->detail = strdup(detail)))
        return -1;
    return 0;
}

/* The message of an error check: a rank's (which says what was raised)
 * before the case-level one (which says only that something was). */
static const char *raised_text(const cJSON *checks)
{
    const char *any = NULL;
    const cJSON *k;
    cJSON_ArrayForEach(k, checks)
    {
        const char *sem = cg_json_str(k, "semantics"), *note = cg_json_str(k, "note");
        if (!sem || strcmp(sem, "error") != 0 || !note || !*note)
            continue;
        if (cg_json_num(k, "rank", -1) >= 0)
            return note;
        if (!any)
            any = note;
    }
    return any;
}

static bool failed_error_check(const cJSON *checks)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, checks)
    {
        const char *sem = cg_json_str(k, "semantics"), *st = cg_json_str(k, "status");
        if (sem && st && strcmp(sem, "error") == 0 && strcmp(st, "fail") == 0)
            return true;
    }
    return false;
}

/* A wrong cell's detail, then the diagnosis the run made (which emulation
 * gives the same numbers), when it made one. */
static int add_diagnosis(cg_cell *cell, const cJSON *cs)
{
    const char *why = cg_json_str(cJSON_GetObjectItemCaseSensitive(cs, "diagnosis"), "explanation");
    if (!why || !*why)
        return 0;
    size_t n = (cell->detail ? strlen(cell->detail) + 1 : 0) + strlen(why) + 16;
    char *text = malloc(n);
    if (!text)
        return -1;
    snprintf(text, n, "%s%sdiagnosis: %s", cell->detail ? cell->detail : "",
             cell->detail ? "\n" : "", why);
    free(cell->detail);
    cell->detail = text;
    return 0;
}

static int fill_cell(cg_cell *cell, const cJSON *cs)
{
    const char *status = cg_json_str(cs, "status"), *msg = cg_json_str(cs, "message");
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(cs, "checks");
    const char *text = NULL, *ran = cg_json_str(cs, "ran");
    if (ran && !(cell->via = strdup(ran)))
        return -1;
    if (!status || strcmp(status, "pass") == 0) {
        cell->kind = CG_CELL_CORRECT;
    } else if (strcmp(status, "skip") == 0) {
        cell->kind = CG_CELL_SKIPPED;
        text = msg;
    } else if (strcmp(status, "error") == 0) {
        bool hang = msg && (strncmp(msg, "hang", 4) == 0 || strstr(msg, "timed out") ||
                            strstr(msg, "deadline"));
        cell->kind = hang ? CG_CELL_HANGS : CG_CELL_ERROR;
        text = msg;
    } else if (failed_error_check(checks)) {
        cell->kind = CG_CELL_REFUSED;
        text = raised_text(checks);
    } else {
        return wrong_cell(cell, checks) != 0 ? -1 : add_diagnosis(cell, cs);
    }
    if (text && !(cell->text = strdup(text)))
        return -1;
    return cell->kind == CG_CELL_REFUSED ? add_diagnosis(cell, cs) : 0;
}

int cg_matrix_add_column(cg_matrix *m, int col, const char *name, const cJSON *report)
{
    if (!(m->cols[col] = strdup(name)))
        return -1;
    const cJSON *fw = cJSON_GetObjectItemCaseSensitive(report, "framework");
    if (cJSON_IsObject(fw)) {
        char note[512];
        const char *fw_name = cg_json_str(fw, "name");
        snprintf(note, sizeof note, "%s %s over %s", fw_name && strcmp(fw_name, "jax") == 0 ? "jax" : "torch",
                 cg_json_str(fw, "version") ? cg_json_str(fw, "version") : "?",
                 cg_json_str(fw, "backend") ? cg_json_str(fw, "backend") : "?");
        if (!(m->col_notes[col] = strdup(note)))
            return -1;
    }
    const cJSON *cs;
    cJSON_ArrayForEach(cs, cJSON_GetObjectItemCaseSensitive(report, "cases"))
    {
        const char *cname = cg_json_str(cs, "name");
        if (!cname)
            continue;
        int r = find_row(m, cname, cg_json_str(cs, "file"), cg_json_int(cs, "world", 0));
        if (r < 0)
            return -1;
        cg_cell *cell = &m->cells[(size_t)r * m->ncols + col];
        if (cell->kind != CG_CELL_ABSENT) /* a case run twice at one world: the first stands */
            continue;
        if (fill_cell(cell, cs) != 0)
            return -1;
    }
    return 0;
}

static const cg_matrix *sorting; /* qsort has no context argument; the sort runs on one thread */

static int by_file_case_world(const void *pa, const void *pb)
{
    const cg_matrix_row *a = &sorting->rows[*(const int *)pa],
                        *b = &sorting->rows[*(const int *)pb];
    int d = strcmp(a->file, b->file);
    if (!d)
        d = strcmp(a->name, b->name);
    return d ? d : a->world - b->world;
}

int cg_matrix_sort(cg_matrix *m)
{
    if (m->nrows < 2)
        return 0;
    int *order = malloc((size_t)m->nrows * sizeof *order);
    cg_matrix_row *rows = malloc((size_t)m->caprows * sizeof *rows);
    cg_cell *cells = malloc((size_t)m->caprows * m->ncols * sizeof *cells);
    if (!order || !rows || !cells) {
        free(order);
        free(rows);
        free(cells);
        return -1;
    }
    for (int r = 0; r < m->nrows; r++)
        order[r] = r;
    sorting = m;
    qsort(order, (size_t)m->nrows, sizeof *order, by_file_case_world);
    sorting = NULL;
    for (int r = 0; r < m->nrows; r++) {
        rows[r] = m->rows[order[r]];
        memcpy(&cells[(size_t)r * m->ncols], &m->cells[(size_t)order[r] * m->ncols],
               (size_t)m->ncols * sizeof *cells);
    }
    free(m->rows);
    free(m->cells);
    m->rows = rows;
    m->cells = cells;
    free(order);
    return 0;
}

/* ---- JSON ------------------------------------------------------------------- */

int cg_matrix_write_json(const cg_matrix *m, FILE *f)
{
    cJSON *doc = cJSON_CreateObject(), *cols = cJSON_AddArrayToObject(doc, "columns");
    cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
    bool ok = doc && cols && rows;
    for (int c = 0; ok && c < m->ncols; c++)
        ok = cJSON_AddItemToArray(cols, cJSON_CreateString(m->cols[c]));
    for (int r = 0; ok && r < m->nrows; r++) {
        cJSON *row = cJSON_CreateObject();
        ok = row && cJSON_AddItemToArray(rows, row) &&
             cJSON_AddStringToObject(row, "case", m->rows[r].name) &&
             cJSON_AddNumberToObject(row, "world", m->rows[r].world);
        cJSON *cells = ok ? cJSON_AddArrayToObject(row, "cells") : NULL;
        ok = cells != NULL;
        for (int c = 0; ok && c < m->ncols; c++) {
            const cg_cell *cell = cg_matrix_cell(m, r, c);
            cJSON *o = cJSON_CreateObject();
            ok = o && cJSON_AddItemToArray(cells, o) &&
                 cJSON_AddStringToObject(o, "kind", cg_cell_word(cell->kind));
            if (ok && cell->kind == CG_CELL_WRONG)
                ok = isfinite(cell->max_err)
                         ? cJSON_AddNumberToObject(o, "max_err", cell->max_err) != NULL
                         : cJSON_AddStringToObject(o, "max_err",
                                                   isnan(cell->max_err) ? "nan"
                                                   : cell->max_err > 0  ? "inf"
                                                                        : "-inf") != NULL;
            if (ok && cell->text)
                ok = cJSON_AddStringToObject(o, "text", cell->text) != NULL;
            if (ok && cell->detail)
                ok = cJSON_AddStringToObject(o, "detail", cell->detail) != NULL;
            if (ok && cell->via)
                ok = cJSON_AddStringToObject(o, "via", cell->via) != NULL;
        }
    }
    cJSON *notes = ok ? cJSON_AddArrayToObject(doc, "notes") : NULL;
    ok = notes != NULL;
    for (int i = 0; ok && i < m->nnotes; i++)
        ok = cJSON_AddItemToArray(notes, cJSON_CreateString(m->notes[i]));
    char *text = ok ? cJSON_Print(doc) : NULL;
    int rc = text && fputs(text, f) >= 0 && fputc('\n', f) != EOF ? 0 : -1;
    cJSON_free(text);
    cJSON_Delete(doc);
    return rc;
}
