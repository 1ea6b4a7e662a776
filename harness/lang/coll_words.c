/* coll_words.c — the names of the collectives and of the reduction ops
 * (coll_words.h); their syntax rows are ir.c's, from the same X-list. */
#include "coll_words.h"

#include <string.h>

static const char *const coll_names[CG_C_COUNT] = {
#define CG_COLL_WORD_NAME(kind, name, lo, hi, kw1, kw2, kw3, first, stmt) [CG_C_##kind] = name,
    CG_COLLECTIVE_WORDS(CG_COLL_WORD_NAME)
#undef CG_COLL_WORD_NAME
};

typedef struct keywords {
    const char *kw[3];
    int first; /* positional index of kw[0]; the others follow it */
} keywords;

static const keywords coll_keywords[CG_C_COUNT] = {
#define CG_COLL_WORD_KW(kind, name, lo, hi, kw1, kw2, kw3, first, stmt)                            \
    [CG_C_##kind] = {{kw1, kw2, kw3}, first},
    CG_COLLECTIVE_WORDS(CG_COLL_WORD_KW)
#undef CG_COLL_WORD_KW
};

static const char *const redop_names[CG_RED_COUNT] = {"sum", "avg", "prod", "max", "min"};

const char *cg_coll_name(cg_coll_kind k) { return (unsigned)k < CG_C_COUNT ? coll_names[k] : "?"; }

int cg_coll_from_name(const char *s)
{
    for (int k = 0; s && k < CG_C_COUNT; k++)
        if (strcmp(s, coll_names[k]) == 0)
            return k;
    return -1;
}

int cg_coll_keyword_index(cg_coll_kind k, const char *kw)
{
    if ((unsigned)k >= CG_C_COUNT || !kw)
        return -1;
    const keywords *w = &coll_keywords[k];
    for (int i = 0; i < 3; i++)
        if (w->kw[i] && w->first >= 0 && strcmp(w->kw[i], kw) == 0)
            return w->first + i;
    return -1;
}

const char *cg_redop_name(cg_redop op) { return (unsigned)op < CG_RED_COUNT ? redop_names[op] : "?"; }

int cg_redop_from_name(const char *s)
{
    for (int k = 0; s && k < CG_RED_COUNT; k++)
        if (strcmp(s, redop_names[k]) == 0)
            return k;
    return -1;
}
