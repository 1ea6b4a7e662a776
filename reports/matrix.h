/* matrix.h — one table of case x backend (`collgrad-check matrix`): a column
 * per backend, each read from the JSON report of one run (an emulated rule
 * set on the tool's MPI ranks, or a real-PyTorch API), a row per (case,
 * world), and in each cell what that backend did with that case, judged
 * against the oracle: correct, wrong (its largest error, the numbers that
 * differ), refused (the error it raised), hangs, error, or skipped (why).
 *
 * Ownership: the matrix owns copies of every string; the reports it was
 * built from may be freed once their column is added. Out of memory is -1
 * from the call that ran out, the matrix then still valid to free. */
#ifndef CG_MATRIX_H
#define CG_MATRIX_H

#include <stdio.h>

struct cJSON;

typedef enum {
    CG_CELL_ABSENT = 0, /* the backend's run has no such (case, world) */
    CG_CELL_CORRECT,
    CG_CELL_WRONG,
    CG_CELL_REFUSED, /* it raised (at forward or backward) where the truth has gradients */
    CG_CELL_HANGS,
    CG_CELL_ERROR, /* the run could not judge it (a bad case, the infrastructure) */
    CG_CELL_SKIPPED
} cg_cell_kind;

typedef struct cg_cell {
    cg_cell_kind kind;
    double max_err; /* WRONG: the largest absolute error of a failing check */
    char *text;     /* REFUSED, HANGS, ERROR, SKIPPED: the message (may be NULL) */
    char *
        detail; /* WRONG: the numbers that differ, "per_rank(x) rank 0: expected [30] observed [12]; ..." */
    char *via;  /* what the framework ran the case with (the report's "ran": "psum, all_gather"); may be NULL */
} cg_cell;

typedef struct cg_matrix_row {
    char *name, *file;
    int world;
} cg_matrix_row;

typedef struct cg_matrix {
    int ncols;
    char **cols;      /* "torch-nn@1.13", "pytorch:nn" */
    char **col_notes; /* "torch 1.13.0a0 over gloo" for a real-framework column; NULL else */
    int nrows, caprows;
    cg_matrix_row *rows; /* in the order the columns first name them */
    cg_cell *cells;      /* nrows x ncols, row-major */
    int nnotes;
    char **notes; /* lines under the table: "`pytorch:funcol` left out: every case skipped: ..." */
} cg_matrix;

/* A matrix of ncols columns, no rows yet; NULL on out of memory. */
cg_matrix *cg_matrix_new(int ncols);
void cg_matrix_free(cg_matrix *m);
/* Fill column col from a parsed JSON report (report_json.h): its name, and
 * a cell for each of the report's cases (rows added as they first appear).
 * 0, or -1 on out of memory. */
int cg_matrix_add_column(cg_matrix *m, int col, const char *name, const struct cJSON *report);
/* Rows in the order of (file, case, world): a case's worlds side by side.
 * 0, or -1 on out of memory (the order then unchanged). */
int cg_matrix_sort(cg_matrix *m);
/* A line to print under the table. 0, or -1 on out of memory. */
int cg_matrix_add_note(cg_matrix *m, const char *line);
const cg_cell *cg_matrix_cell(const cg_matrix *m, int row, int col);
/* "correct", "wrong", "refused", "hangs", "error", "skipped", "-" (absent). */
const char *cg_cell_word(cg_cell_kind k);
/* The cell's head: its word, a wrong cell's largest error and what it ran
 * with: "correct", "wrong (1.8e+01)", "correct via psum". */
void cg_cell_head(const cg_cell *c, char *buf, size_t len);
/* The cell in one line of at most len bytes: its head and its message:
 * "refused: Cannot use ReduceOp.AVG with Gloo", "skipped: no send/recv". */
void cg_cell_summary(const cg_cell *c, char *buf, size_t len);

/* Writers: 0, or -1 when the stream fails (the caller names the file). The
 * HTML page is self-contained (inline style, no script, nothing fetched):
 * each cell's full message and differing numbers are its title, shown on
 * hover. The JSON is {"columns": [...], "rows": [{"case", "world",
 * "cells": [{"kind", "max_err", "text", "detail", "via"}]}]}. */
int cg_matrix_write_markdown(const cg_matrix *m, FILE *f);
int cg_matrix_write_html(const cg_matrix *m, FILE *f, const char *title);
int cg_matrix_write_json(const cg_matrix *m, FILE *f);

#endif
