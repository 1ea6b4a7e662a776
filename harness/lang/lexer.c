/* lexer.c — turns case-language bytes into tokens (see lexer.h).
 *
 * Every read is bounded by len: the input is not NUL-terminated. */
#include "lexer.h"

#include <stdio.h>
#include <string.h>

void cg_lex_init(cg_lexer *lx, const char *buf, size_t len)
{
    memset(lx, 0, sizeof *lx);
    lx->buf = buf ? buf : ""; /* tokens point into buf: NULL + 0 is undefined */
    lx->len = buf ? len : 0;
    lx->line = 1;
    lx->col = 1;
    lx->last.kind = CG_TOK_NEWLINE;
}

static int peek_at(const cg_lexer *lx, size_t ahead)
{
    size_t i = lx->pos + ahead;
    return i < lx->len ? (unsigned char)lx->buf[i] : -1;
}

static void step(cg_lexer *lx)
{
    if (lx->buf[lx->pos] == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->pos++;
}

static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alnum(int c) { return is_alpha(c) || is_digit(c); }
/* Control bytes (tab aside), DEL and non-ASCII bytes: not part of code. */
static bool is_junk(int c) { return (c < 0x20 && c != '\t') || c >= 0x7f; }

bool cg_tok_is(const cg_token *t, const char *punct)
{
    size_t n = strlen(punct);
    return t->kind == CG_TOK_PUNCT && t->len == n && memcmp(t->text, punct, n) == 0;
}

bool cg_tok_is_name(const cg_token *t, const char *name)
{
    size_t n = strlen(name);
    return t->kind == CG_TOK_NAME && t->len == n && memcmp(t->text, name, n) == 0;
}

/* A line ending in one of these is not finished inside brackets. */
static bool last_continues_line(const cg_lexer *lx)
{
    const cg_token *t = &lx->last;
    return t->kind == CG_TOK_PUNCT && !cg_tok_is(t, ")") && !cg_tok_is(t, "]") &&
           !cg_tok_is(t, "}") && !cg_tok_is(t, ";");
}

/* Does the next code (past blanks, comments and newlines) close a bracket? */
static bool next_code_closes(const cg_lexer *lx)
{
    size_t i = lx->pos;
    while (i < lx->len) {
        char c = lx->buf[i];
        if (c == '#') {
            while (i < lx->len && lx->buf[i] != '\n')
                i++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            i++;
        } else {
            return c == ')' || c == ']';
        }
    }
    return false;
}

/* Skips blanks, comments and continued newlines. *mark is where the code on
 * the current line ended if a comment followed it (end of line is reported
 * there rather than after the comment). */
static void skip_blank(cg_lexer *lx, int *mark_line, int *mark_col)
{
    *mark_line = 0;
    for (int c; (c = peek_at(lx, 0)) >= 0;) {
        if (c == ' ' || c == '\t' || c == '\r') {
            step(lx);
        } else if (c == '#') {
            if (!*mark_line) {
                *mark_line = lx->line;
                *mark_col = lx->col;
            }
            /* Any text, but a control byte ends the comment: it is junk to report. */
            while (peek_at(lx, 0) >= 0 && peek_at(lx, 0) != '\n' &&
                   (!is_junk(peek_at(lx, 0)) || peek_at(lx, 0) >= 0x80 || peek_at(lx, 0) == '\r'))
                step(lx);
        } else if (c == '\n' && lx->paren_depth > 0 && (last_continues_line(lx) || next_code_closes(lx))) {
            step(lx);
            *mark_line = 0;
        } else {
            return;
        }
    }
}

static cg_token make(cg_lexer *lx, cg_tok_kind kind, size_t start, int line, int col)
{
    cg_token t = {kind, lx->buf + start, lx->pos - start, line, col, false};
    return t;
}

static void lex_number(cg_lexer *lx)
{
    while (is_digit(peek_at(lx, 0)))
        step(lx);
    if (peek_at(lx, 0) == '.' && peek_at(lx, 1) != '.') {
        step(lx);
        while (is_digit(peek_at(lx, 0)))
            step(lx);
    }
    int e = peek_at(lx, 0), s = peek_at(lx, 1);
    if ((e == 'e' || e == 'E') && (is_digit(s) || ((s == '+' || s == '-') && is_digit(peek_at(lx, 2))))) {
        step(lx);
        step(lx);
        while (is_digit(peek_at(lx, 0)))
            step(lx);
    }
}

/* A string; on a malformed one returns false with lx->msg set and the lexer
 * at the offending byte. */
static bool lex_string(cg_lexer *lx, int line, int col)
{
    step(lx); /* opening quote */
    for (;;) {
        int c = peek_at(lx, 0);
        if (c < 0 || c == '\n') {
            snprintf(lx->msg, sizeof lx->msg, "expected '\"' to close the string at %d:%d, got %s", line,
                     col, c < 0 ? "end of file" : "end of line");
            return false;
        }
        if (c == '"') {
            step(lx);
            return true;
        }
        if (c == '\\') {
            int e = peek_at(lx, 1);
            if (e != '"' && e != '\\') {
                step(lx);
                char got[16];
                if (e < 0 || e == '\n')
                    snprintf(got, sizeof got, e < 0 ? "end of file" : "end of line");
                else if (is_junk(e))
                    snprintf(got, sizeof got, "byte 0x%02X", (unsigned)e);
                else
                    snprintf(got, sizeof got, "'%c'", e);
                snprintf(lx->msg, sizeof lx->msg, "expected '\\\"' or '\\\\' after '\\', got %s", got);
                return false;
            }
            step(lx);
        } else if (c < 0x20 && c != '\t') {
            snprintf(lx->msg, sizeof lx->msg, "expected string text, got byte 0x%02X", (unsigned)c);
            return false;
        }
        step(lx);
    }
}

static void track_brackets(cg_lexer *lx, cg_token *t)
{
    char c = t->text[0];
    if (c == '(' || c == '[') {
        lx->paren_depth++;
    } else if (c == '{') {
        lx->brace_depth++;
    } else if (c == ')' || c == ']') {
        t->unmatched = lx->paren_depth == 0;
        lx->paren_depth -= !t->unmatched;
    } else if (c == '}') {
        t->unmatched = lx->brace_depth == 0;
        lx->brace_depth -= !t->unmatched;
    }
}

static cg_token lex_punct(cg_lexer *lx, int line, int col)
{
    static const char *const two[] = {"**", "==", "!=", "<=", ">=", "&&", "||", ".."};
    size_t start = lx->pos;
    int c0 = peek_at(lx, 0), c1 = peek_at(lx, 1);
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
        if (c0 == two[i][0] && c1 == two[i][1]) {
            step(lx);
            step(lx);
            return make(lx, CG_TOK_PUNCT, start, line, col);
        }
    step(lx);
    cg_token t = make(lx, CG_TOK_PUNCT, start, line, col);
    track_brackets(lx, &t);
    return t;
}

static cg_token lex_code(cg_lexer *lx)
{
    int mark_line, mark_col = 0;
    skip_blank(lx, &mark_line, &mark_col);
    int line = mark_line ? mark_line : lx->line, col = mark_line ? mark_col : lx->col;
    size_t start = lx->pos;
    int c = peek_at(lx, 0);
    if (c < 0)
        return make(lx, CG_TOK_EOF, start, line, col);
    if (c == '\n') {
        step(lx);
        lx->paren_depth = 0; /* a statement never spans it: the parser reports what is open */
        cg_token t = make(lx, CG_TOK_NEWLINE, start, line, col);
        t.len = 0;
        return t;
    }
    line = lx->line;
    col = lx->col;
    if (is_alpha(c)) {
        while (is_alnum(peek_at(lx, 0)))
            step(lx);
        return make(lx, CG_TOK_NAME, start, line, col);
    }
    if (is_digit(c) || (c == '.' && is_digit(peek_at(lx, 1)))) {
        lex_number(lx);
        return make(lx, CG_TOK_NUM, start, line, col);
    }
    if (c == '"') {
        if (lex_string(lx, line, col))
            return make(lx, CG_TOK_STRING, start, line, col);
        cg_token t = make(lx, CG_TOK_ERROR, start, lx->line, lx->col);
        t.text = lx->buf + lx->pos;
        t.len = 0;
        return t;
    }
    if (is_junk(c)) {
        step(lx);
        return make(lx, CG_TOK_BYTE, start, line, col);
    }
    return lex_punct(lx, line, col);
}

static bool in_word(int c, cg_lex_mode mode)
{
    return is_alnum(c) || c == '.' || c == '-' ||
           (mode == CG_LEX_RULES_WORD && (c == '/' || c == '@'));
}

static cg_token lex_word(cg_lexer *lx, cg_lex_mode mode)
{
    int mark_line, mark_col = 0;
    skip_blank(lx, &mark_line, &mark_col);
    size_t start = lx->pos;
    int line = lx->line, col = lx->col;
    while (peek_at(lx, 0) >= 0 && in_word(peek_at(lx, 0), mode))
        step(lx);
    return lx->pos > start ? make(lx, CG_TOK_WORD, start, line, col) : lex_code(lx);
}

/* The rest of the line, trimmed. A control byte inside it becomes a BYTE
 * token at that byte (source text is stored as a C string). */
static cg_token lex_rest_of_line(cg_lexer *lx)
{
    while (peek_at(lx, 0) == ' ' || peek_at(lx, 0) == '\t')
        step(lx);
    size_t start = lx->pos, end = start;
    while (end < lx->len && lx->buf[end] != '\n')
        end++;
    while (end > start && strchr(" \t\r", lx->buf[end - 1]))
        end--;
    if (end == start)
        return lex_code(lx);
    int line = lx->line, col = lx->col;
    while (lx->pos < end) {
        int c = peek_at(lx, 0);
        if (c < 0x20 && c != '\t') {
            size_t at = lx->pos;
            int bcol = lx->col;
            step(lx);
            return make(lx, CG_TOK_BYTE, at, line, bcol);
        }
        step(lx);
    }
    return make(lx, CG_TOK_TEXT, start, line, col);
}

cg_token cg_lex_next(cg_lexer *lx, cg_lex_mode mode)
{
    cg_token t;
    switch (mode) {
    case CG_LEX_CASE_NAME:
    case CG_LEX_RULES_WORD: t = lex_word(lx, mode); break;
    case CG_LEX_REST_OF_LINE: t = lex_rest_of_line(lx); break;
    default: t = lex_code(lx); break;
    }
    lx->last = t;
    return t;
}

void cg_tok_describe(const cg_token *t, char *buf, size_t n)
{
    const int max = 40; /* long tokens are cut so messages stay one readable line */
    int len = t->len > (size_t)max ? max : (int)t->len;
    const char *more = t->len > (size_t)max ? "..." : "";
    switch (t->kind) {
    case CG_TOK_EOF: snprintf(buf, n, "end of file"); break;
    case CG_TOK_NEWLINE: snprintf(buf, n, "end of line"); break;
    case CG_TOK_NUM: snprintf(buf, n, "%.*s%s", len, t->text, more); break;
    case CG_TOK_STRING: snprintf(buf, n, "a string"); break;
    case CG_TOK_BYTE: snprintf(buf, n, "byte 0x%02X", (unsigned)(unsigned char)t->text[0]); break;
    case CG_TOK_ERROR: snprintf(buf, n, "a malformed string"); break;
    case CG_TOK_PUNCT:
        snprintf(buf, n, "%s'%.*s'", t->unmatched ? "unmatched " : "", len, t->text);
        break;
    default: snprintf(buf, n, "'%.*s%s'", len, t->text, more); break;
    }
}
