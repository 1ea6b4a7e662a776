/* explore_gen.h — random programs in the case language, valid by
 * construction, the same for a seed on every machine (design.md section 15).
 *
 * A program is 1-4 params per rank of random shapes (rows a multiple of the
 * world, so every split collective divides them), local ops drawn from the
 * op table (harness/lang/op_table.h: only smooth ops, their domains
 * respected by construction: log(v * v + 1)), 1-6 collectives drawn from the
 * collective table, and 1-3 backward calls of per-rank losses. Some programs
 * make a process group (a subset of the ranks) or a [2, W/2] mesh, and call
 * collectives of every kind but send/recv (which take no group) on them:
 * rooted ones from a member, or on a mesh from each row's or column's first
 * rank (a rank expression), gather's and reduce's results read by a backward
 * on their roots alone; all_gather and reduce_scatter on a mesh only. Some
 * reduce_scatters and all_to_alls split unevenly (send_splits, recv_splits:
 * the output's shape differs between ranks, so only a loss or an all_gather
 * reads it), and send/recv rings shift by 1..W-1 ranks. bf16 and f16
 * programs (--halves) reduce with no MAX/MIN (values that differ may round
 * to a tie), and f16's keep every value below 50, sums and exp included, so
 * that values and gradients stay under its largest finite 65504. Values are drawn per rank (randn keyed by rank), and MAX/MIN
 * reduce only values that differ between ranks (never a group's equal
 * results), so no tie occurs; nothing divides by zero.
 *
 * The generator writes text, which the tool's own parser reads: a program it
 * rejects, or that the oracle cannot run, is a bug of the generator and is
 * counted as one (explore.c). */
#ifndef CG_EXPLORE_GEN_H
#define CG_EXPLORE_GEN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cg_gen_opts {
    int max_world;   /* worlds 1..max_world */
    bool halves;     /* bf16 and f16 programs too (else f64 and f32) */
} cg_gen_opts;

/* Program `index` of `seed` as case-language text named NAME, malloc'd (the
 * caller frees), or NULL when out of memory. */
char *cg_explore_program(uint64_t seed, long index, const cg_gen_opts *o, const char *name);

#endif
