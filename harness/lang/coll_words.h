/* coll_words.h — the collectives as the case language spells them: one row
 * per kind, its name and its argument syntax. What each one does is the
 * collectives layer's table (collectives.h), keyed by the same kind; this
 * is only what the parser must know to read a call, so the language knows
 * the words and nothing above has to be told them again.
 *
 * Rows: X(KIND, "name", min args, max args, keywords 1..3, positional
 * index of keyword 1 (-1: keyword-only; the others follow it), statement).
 * Arity counts positional and keyword arguments together (ir.c's built-in
 * functions say the same). Every collective takes group= last (a process
 * group, interp.h); send is a statement (it yields nothing); recv's
 * argument is the source. */
#ifndef CG_COLL_WORDS_H
#define CG_COLL_WORDS_H

#define CG_COLLECTIVE_WORDS(X)                                                                     \
    X(ALL_REDUCE, "all_reduce", 1, 3, "op", "group", NULL, 1, false)                               \
    X(ALL_GATHER, "all_gather", 1, 2, "group", NULL, NULL, 1, false)                               \
    X(REDUCE_SCATTER, "reduce_scatter", 1, 4, "op", "send_splits", "group", 1, false)              \
    X(BROADCAST, "broadcast", 1, 3, "root", "group", NULL, 1, false)                               \
    X(REDUCE, "reduce", 1, 4, "root", "op", "group", 1, false)                                     \
    X(GATHER, "gather", 1, 3, "root", "group", NULL, 1, false)                                     \
    X(SCATTER, "scatter", 1, 3, "root", "group", NULL, 1, false)                                   \
    X(ALL_TO_ALL, "all_to_all", 1, 4, "send_splits", "recv_splits", "group", 1, false)             \
    X(SEND, "send", 2, 2, NULL, NULL, NULL, -1, true)                                              \
    X(RECV, "recv", 1, 1, NULL, NULL, NULL, -1, false)

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
