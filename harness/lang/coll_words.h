/* coll_words.h — the collectives as the case language spells them: one row
 * per kind, its name and its argument syntax. What each one does is the
 * collectives layer's table (collectives.h), keyed by the same kind; this
 * is only what the parser must know to read a call, so the language knows
 * the words and nothing above has to be told them again.
 *
 * The rows are the kinds' own (each kind's file in harness/collectives/kinds
 * says its words in one line, which the build gathers into cg_kinds.h:
 * kinds/kinds.cmake), in the order of the enum below.
 *
 * Rows: X(KIND, "name", min args, max args, keywords 1..3, positional
 * index of keyword 1 (-1: keyword-only; the others follow it), statement).
 * Arity counts positional and keyword arguments together (ir.c's built-in
 * functions say the same). Every collective takes group= last (a process
 * group, interp.h); send is a statement (it yields nothing); recv's
 * argument is the source. */
#ifndef CG_COLL_WORDS_H
#define CG_COLL_WORDS_H

#include "cg_kinds.h" /* generated: CG_COLLECTIVE_WORDS(X), one row per kind */

typedef enum {
#define CG_COLL_WORD_KIND(kind, name, lo, hi, kw1, kw2, kw3, first, stmt) CG_C_##kind,
    CG_COLLECTIVE_WORDS(CG_COLL_WORD_KIND)
#undef CG_COLL_WORD_KIND
        CG_C_COUNT
} cg_coll_kind;

/* The reduction ops a collective's op= names. */
typedef enum { CG_RED_SUM, CG_RED_AVG, CG_RED_PROD, CG_RED_MAX, CG_RED_MIN, CG_RED_COUNT } cg_redop;

const char *cg_coll_name(cg_coll_kind k);   /* "all_reduce", ...; "?" for no kind */
int cg_coll_from_name(const char *s);       /* kind, or -1 */
/* The positional index at which kind k takes keyword `kw` ("op", "root"),
 * or -1 when it takes no such argument: all_reduce's op is at 1, reduce's at 2. */
int cg_coll_keyword_index(cg_coll_kind k, const char *kw);
const char *cg_redop_name(cg_redop op);     /* "sum", "avg", "prod", "max", "min" */
int cg_redop_from_name(const char *s);      /* op, or -1 */

#endif
