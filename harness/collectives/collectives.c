/* collectives.c — the table of collectives (collectives.h): one row per
 * kind, each defined in its own file (kinds/NAME.c) and listed by the build
 * (kinds/kinds.cmake, whose order is the enum's). */
#include "collectives.h"

double cg_busbw_one(int world) { (void)world; return 1.0; }
double cg_busbw_ring(int world) { return (double)(world - 1) / world; }

#define CG_KIND_DECLARE(kind, symbol) extern const cg_collective symbol;
CG_KIND_FILES(CG_KIND_DECLARE)
#undef CG_KIND_DECLARE

static const cg_collective *const table[CG_C_COUNT] = {
#define CG_KIND_ROW(kind, symbol) [CG_C_##kind] = &symbol,
    CG_KIND_FILES(CG_KIND_ROW)
#undef CG_KIND_ROW
};

const cg_collective *cg_collective_of(cg_coll_kind k)
{
    return (unsigned)k < CG_C_COUNT ? table[k] : NULL;
}

const cg_collective *cg_collective_named(const char *name)
{
    int k = cg_coll_from_name(name);
    return k >= 0 ? table[k] : NULL;
}

bool cg_coll_has_op(cg_coll_kind k) { return cg_coll_keyword_index(k, "op") >= 0; }

bool cg_coll_has_root(cg_coll_kind k) { return cg_coll_keyword_index(k, "root") >= 0; }
