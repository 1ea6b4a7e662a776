/* lexer.h — tokens of the case language, with 1-based line and column.
 *
 * The input is a byte buffer of known length (not NUL-terminated). Columns
 * count bytes: a tab is one column. The lexer never fails outright: bytes it
 * cannot place become CG_TOK_BYTE tokens, so the parser can say what it
 * expected there; only malformed strings produce CG_TOK_ERROR with a message.
 *
 * Newlines end statements, except inside ( ) and [ ] where a newline is a
 * line continuation when the line ends with a token that cannot end an
 * expression (an operator, '(', '[', ',', ...) or when the next line starts
 * with ')' or ']'. Any other newline inside brackets is reported as end of
 * line, so an unclosed '(' is caught on its own line. */
#ifndef CG_LEXER_H
#define CG_LEXER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    CG_TOK_EOF,
    CG_TOK_NEWLINE,
    CG_TOK_NAME,   /* [A-Za-z_][A-Za-z0-9_]* */
    CG_TOK_NUM,    /* 12, 1.5, .5, 2., 1e-3 (never signed) */
    CG_TOK_STRING, /* "..." with \" and \\ escapes; text includes the quotes */
    CG_TOK_PUNCT,  /* operators and brackets, text is the punctuation */
    CG_TOK_WORD,   /* CG_LEX_CASE_NAME / CG_LEX_RULES_WORD modes only */
    CG_TOK_TEXT,   /* CG_LEX_REST_OF_LINE mode only: trimmed raw text */
    CG_TOK_BYTE,   /* a byte that starts no token (control or >= 0x80) */
    CG_TOK_ERROR,  /* a malformed string; the message is in cg_lexer.msg */
} cg_tok_kind;

/* What the parser expects next; words and raw text follow other rules than
 * code. A mode that finds nothing of its kind falls back to code tokens. */
typedef enum {
    CG_LEX_CODE,
    CG_LEX_CASE_NAME,   /* [A-Za-z0-9_.-]+ */
    CG_LEX_RULES_WORD,  /* [A-Za-z0-9_./-]+ */
    CG_LEX_REST_OF_LINE /* the rest of the line, trimmed; '#' is text here */
} cg_lex_mode;

typedef struct cg_token {
    cg_tok_kind kind;
    const char *text; /* points into the input */
    size_t len;
    int line, col;
    bool unmatched;   /* ')' ']' '}' with no bracket of that family open */
} cg_token;

typedef struct cg_lexer {
    const char *buf;
    size_t len, pos;
    int line, col;
    int paren_depth, brace_depth;
    cg_token last; /* the previous token: decides line continuation */
    char msg[160]; /* for CG_TOK_ERROR: "expected ..., got ..." */
} cg_lexer;

void cg_lex_init(cg_lexer *lx, const char *buf, size_t len);
cg_token cg_lex_next(cg_lexer *lx, cg_lex_mode mode);

bool cg_tok_is(const cg_token *t, const char *punct);  /* that exact punctuation */
bool cg_tok_is_name(const cg_token *t, const char *name);

/* "end of line", "'foo'", "12", "byte 0x00", "unmatched ')'" ... for the
 * "got WHAT" half of an error message. */
void cg_tok_describe(const cg_token *t, char *buf, size_t n);

#endif
