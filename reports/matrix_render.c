/* matrix_render.c — the case x backend table as Markdown (a README, a CI
 * summary) and as one self-contained HTML page (matrix.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "matrix.h"

enum { MD_TEXT = 40 }; /* a Markdown cell's message is cut here: the full one is in the HTML page */

static const char *const legend =
    "correct: every value and gradient matches the oracle; wrong (E): the largest absolute error "
    "E; "
    "refused: the backend raised (at forward or backward) where the truth has gradients; hangs: a "
    "collective or the backward timed out; skipped: the backend cannot express the case; via P: "
    "what the framework ran it with (a JAX column: the primitives, in first use); -: not run";

/* ---- Markdown ---------------------------------------------------------------- */

/* The first n bytes of s in a table cell (continued to a UTF-8 boundary):
 * pipes escaped, line breaks as spaces, "..." when cut. */
static void md_text(FILE *f, const char *s, size_t n, bool cut)
{
    const char *end = s + n;
    for (; *s && s < end; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r' || *s == '\t')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
    while (*s && ((unsigned char)*s & 0xC0) == 0x80) /* finish the character */
        fputc(*s++, f);
    if (cut)
        fputs("...", f);
}

/* A message without what the table already says: a leading "file:line:col: "
 * (the row names the case) and "hang: " (the cell says hangs). */
static const char *short_text(const char *s, size_t *len)
{
    *len = strlen(s);
    const char *semi =
        strstr(s, "; this case also uses"); /* a skip's reason, without the case's part */
    if (semi)
        *len = (size_t)(semi - s);
    if (strncmp(s, "hang: ", 6) == 0) {
        *len -= 6;
        return s + 6;
    }
    const char *colon = strstr(s, ": ");
    if (colon) { /* "PATH:LINE:COL: ": a path, then two numbers */
        const char *p = colon;
        int numbers = 0;
        while (numbers < 2 && p > s && p[-1] >= '0' && p[-1] <= '9') {
            while (p > s && p[-1] >= '0' && p[-1] <= '9')
                p--;
            if (p > s && p[-1] == ':')
                p--, numbers++;
            else
                break;
        }
        if (numbers == 2 && p > s && !memchr(s, ' ', (size_t)(p - s))) {
            *len -= (size_t)(colon + 2 - s);
            return colon + 2;
        }
    }
    return s;
}

int cg_matrix_write_markdown(const cg_matrix *m, FILE *f)
{
    fputs("| case | W |", f);
    for (int c = 0; c < m->ncols; c++) {
        fputs(" `", f);
        md_text(f, m->cols[c], strlen(m->cols[c]), false);
        fputs("` |", f);
    }
    fputs("\n| --- | --- |", f);
    for (int c = 0; c < m->ncols; c++)
        fputs(" --- |", f);
    fputc('\n', f);
    for (int r = 0; r < m->nrows; r++) {
        fputs("| ", f);
        md_text(f, m->rows[r].name, strlen(m->rows[r].name), false);
        fprintf(f, " | %d |", m->rows[r].world);
        for (int c = 0; c < m->ncols; c++) {
            const cg_cell *cell = cg_matrix_cell(m, r, c);
            char head[256];
            cg_cell_head(cell, head, sizeof head);
            fputc(' ', f);
            md_text(f, head, strlen(head), false);
            if (cell->text && cell->kind != CG_CELL_CORRECT && cell->kind != CG_CELL_WRONG) {
                fputs(": ", f);
                size_t len;
                const char *t = short_text(cell->text, &len);
                md_text(f, t, len < MD_TEXT ? len : MD_TEXT, len > MD_TEXT);
            }
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    fprintf(f, "\n%s.\n", legend);
    for (int c = 0; c < m->ncols; c++)
        if (m->col_notes[c])
            fprintf(f, "`%s`: %s.  \n", m->cols[c], m->col_notes[c]);
    for (int i = 0; i < m->nnotes; i++)
        fprintf(f, "%s  \n", m->notes[i]);
    return ferror(f) ? -1 : 0;
}

/* ---- HTML -------------------------------------------------------------------- */

static void html_text(FILE *f, const char *s)
{
    for (; s && *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        case '\n': fputs("&#10;", f); break;
        default: fputc(*s, f);
        }
}

static const char *const style =
    "body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}"
    "table{border-collapse:collapse}"
    "th,td{border:1px solid #bbb;padding:3px 7px;white-space:nowrap;text-align:left}"
    "thead th{background:#e8e8e8;position:sticky;top:0}"
    "td.correct{background:#cdeccd}td.wrong{background:#f6b9b9;font-weight:600}"
    "td.refused{background:#fbdca8}td.hangs{background:#dcc6ef}td.error{background:#ee9090}"
    "td.skipped{background:#f3f3f3;color:#888}td.absent{color:#bbb}"
    "td[title]{cursor:help}p{max-width:70em}";

static void html_cell(FILE *f, const cg_matrix *m, int r, int c)
{
    const cg_cell *cell = cg_matrix_cell(m, r, c);
    const char *word = cell->kind == CG_CELL_ABSENT ? "absent" : cg_cell_word(cell->kind);
    fprintf(f, "<td class=\"%s\" data-col=\"", word);
    html_text(f, m->cols[c]);
    fputc('"', f);
    if (cell->text || cell->detail) { /* the full message and the numbers, on hover */
        fputs(" title=\"", f);
        html_text(f, cell->text);
        if (cell->text && cell->detail)
            fputc('\n', f);
        html_text(f, cell->detail);
        fputc('"', f);
    }
    fputc('>', f);
    char head[256];
    cg_cell_head(cell, head, sizeof head);
    html_text(f, head);
    fputs("</td>", f);
}

int cg_matrix_write_html(const cg_matrix *m, FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    html_text(f, title);
    fprintf(f, "</title><style>%s</style></head>\n<body><h1>", style);
    html_text(f, title);
    fputs("</h1>\n<p>", f);
    html_text(f, legend);
    fputs(". Hover over a cell for the message and the numbers that differ.</p>\n<p>", f);
    for (int c = 0; c < m->ncols; c++)
        if (m->col_notes[c]) {
            fputs("<code>", f);
            html_text(f, m->cols[c]);
            fputs("</code>: ", f);
            html_text(f, m->col_notes[c]);
            fputs(". ", f);
        }
    fputs("</p>\n<table><thead><tr><th>case</th><th>W</th>", f);
    for (int c = 0; c < m->ncols; c++) {
        fputs("<th>", f);
        html_text(f, m->cols[c]);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int r = 0; r < m->nrows; r++) {
        fputs("<tr data-case=\"", f);
        html_text(f, m->rows[r].name);
        fprintf(f, "\" data-world=\"%d\"><th title=\"", m->rows[r].world);
        html_text(f, m->rows[r].file);
        fputs("\">", f);
        html_text(f, m->rows[r].name);
        fprintf(f, "</th><td>%d</td>", m->rows[r].world);
        for (int c = 0; c < m->ncols; c++)
            html_cell(f, m, r, c);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    for (int i = 0; i < m->nnotes; i++) {
        fputs("<p class=\"note\">", f);
        html_text(f, m->notes[i]);
        fputs("</p>\n", f);
    }
    fputs("</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
