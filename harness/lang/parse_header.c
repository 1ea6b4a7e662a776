/* parse_header.c — the header lines that describe a case rather than run it:
 * case, source, world(s), dtype, tolerance, seed, jax. Each fills its slot
 * of the case once; a repeat is an error at the second. Grammar in parser.c. */
#include "parse_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const header_words[] = {"case",      "source", "world", "worlds", "dtype",
                                           "tolerance", "seed",   "jax"};
static const int header_slots[] = {CG_HDR_CASE,      CG_HDR_SOURCE, CG_HDR_WORLD, CG_HDR_WORLD, CG_HDR_DTYPE,
                                   CG_HDR_TOLERANCE, CG_HDR_SEED,   CG_HDR_JAX};

/* The jax line's keys: each the usual spelling (the default) or the other. */
static const struct {
    const char *key, *usual, *other;
    size_t flag; /* offsetof(cg_jax_spelling, ...): true for the other */
} jax_keys[] = {
    {"all_gather", "varying", "invarying", offsetof(cg_jax_spelling, all_gather_invarying)},
    {"loss", "varying", "replicated", offsetof(cg_jax_spelling, loss_replicated)},
    {"backward", "outside", "in_body", offsetof(cg_jax_spelling, backward_in_body)},
};
#define NJAX_KEYS ((int)(sizeof jax_keys / sizeof jax_keys[0]))
#define NHEADER_WORDS ((int)(sizeof header_words / sizeof header_words[0]))

static int header_index(const cg_token *t)
{
    for (int i = 0; i < NHEADER_WORDS; i++)
        if (cg_tok_is_name(t, header_words[i]))
            return i;
    return -1;
}

bool cg_is_header_word(const cg_token *t) { return header_index(t) >= 0; }

/* The current token as a world size; the caller advances past it. */
static bool world_size(cg_parser *p, int *out)
{
    unsigned long long v;
    if (!cg_p_tok_uint(cg_p_tok(p), CG_MAX_WORLD, &v) || v < 1) {
        cg_error_at(&p->st, cg_p_here(p), "expected a world size in 1..64, got %s", cg_p_got(p));
        return false;
    }
    *out = (int)v;
    return true;
}

static bool parse_world_spec(cg_parser *p, bool several)
{
    bool in[CG_MAX_WORLD + 1] = {false};
    do {
        cg_p_advance(p); /* 'worlds', 'world' or ',' */
        cg_token first = p->tok;
        int a, b;
        if (!world_size(p, &a))
            return false;
        cg_p_advance(p);
        b = a;
        if (several && cg_p_is(p, "..")) {
            cg_p_advance(p);
            if (!world_size(p, &b))
                return false;
            cg_p_advance(p);
            if (b < a) {
                cg_error_at(&p->st, cg_p_pos(p, first.line, first.col),
                            "expected a world range A..B with A <= B, got %d..%d", a, b);
                return false;
            }
        }
        for (int w = a; w <= b; w++)
            in[w] = true;
    } while (several && cg_p_is(p, ","));
    for (int w = 1; w <= CG_MAX_WORLD; w++)
        if (in[w])
            p->c->worlds[p->c->nworlds++] = w;
    return !cg_p_failed(p);
}

static bool parse_case_name(cg_parser *p)
{
    cg_p_advance_mode(p, CG_LEX_CASE_NAME);
    if (cg_p_tok(p)->kind != CG_TOK_WORD) {
        cg_error_at(&p->st, cg_p_here(p), "expected a case name, got %s", cg_p_got(p));
        return false;
    }
    p->c->name = cg_p_strndup(p, cg_p_tok(p)->text, cg_p_tok(p)->len);
    cg_p_advance(p);
    return !cg_p_failed(p);
}

static bool parse_source(cg_parser *p)
{
    cg_p_advance_mode(p, CG_LEX_REST_OF_LINE);
    if (cg_p_tok(p)->kind != CG_TOK_TEXT) {
        cg_error_at(&p->st, cg_p_here(p), "expected source text, got %s", cg_p_got(p));
        return false;
    }
    p->c->source = cg_p_strndup(p, cg_p_tok(p)->text, cg_p_tok(p)->len);
    cg_p_advance(p);
    return !cg_p_failed(p);
}

static bool parse_dtype(cg_parser *p)
{
    cg_p_advance(p);
    char name[8] = "";
    if (cg_p_tok(p)->kind == CG_TOK_NAME && cg_p_tok(p)->len < sizeof name)
        memcpy(name, cg_p_tok(p)->text, cg_p_tok(p)->len);
    if (cg_dtype_parse(name, &p->c->dtype) != 0) {
        cg_error_at(&p->st, cg_p_here(p), "expected a dtype (f32, f64, bf16 or f16), got %s",
                    cg_p_got(p));
        return false;
    }
    cg_p_advance(p);
    return !cg_p_failed(p);
}

static bool tolerance_number(cg_parser *p, double *out)
{
    if (!cg_p_number(p, "a tolerance number", out))
        return false;
    cg_p_advance(p);
    return !cg_p_failed(p);
}

/* At KEY of a "KEY=VALUE" pair: KEY not seen before on this line (then
 * marked), and the '=' after it; leaves the parser at VALUE. */
static bool key_then_equals(cg_parser *p, bool *seen, const char *key)
{
    if (*seen) {
        cg_error_at(&p->st, cg_p_here(p), "expected '%s' once, got it twice", key);
        return false;
    }
    *seen = true;
    cg_p_advance(p);
    if (!cg_p_is(p, "=")) {
        cg_error_at(&p->st, cg_p_here(p), "expected '=', got %s", cg_p_got(p));
        return false;
    }
    cg_p_advance(p);
    return true;
}

static bool parse_tolerance(cg_parser *p)
{
    cg_case *c = p->c;
    cg_p_advance(p);
    if (cg_p_tok(p)->kind == CG_TOK_NUM) {
        if (!tolerance_number(p, &c->rtol))
            return false;
        c->atol = c->rtol;
        return true;
    }
    if (!cg_p_is_name(p, "rtol") && !cg_p_is_name(p, "atol")) {
        cg_error_at(&p->st, cg_p_here(p),
                    "expected a tolerance (NUM, or rtol=NUM and/or atol=NUM), got %s", cg_p_got(p));
        return false;
    }
    bool seen[2] = {false, false};
    while (cg_p_is_name(p, "rtol") || cg_p_is_name(p, "atol")) {
        int which = cg_p_is_name(p, "atol");
        if (!key_then_equals(p, &seen[which], which ? "atol" : "rtol"))
            return false;
        if (!tolerance_number(p, which ? &c->atol : &c->rtol))
            return false;
    }
    return true;
}

static bool parse_seed(cg_parser *p)
{
    cg_p_advance(p);
    if (!cg_p_tok_uint(cg_p_tok(p), ~0ULL, &p->c->seed)) {
        cg_error_at(&p->st, cg_p_here(p), "expected a seed in 0..18446744073709551615, got %s",
                    cg_p_got(p));
        return false;
    }
    p->c->has_seed = true;
    cg_p_advance(p);
    return !cg_p_failed(p);
}

static int jax_key(cg_parser *p)
{
    for (int i = 0; i < NJAX_KEYS; i++)
        if (cg_p_is_name(p, jax_keys[i].key))
            return i;
    return -1;
}

const char *cg_jax_spelling_word(const cg_jax_spelling *s, int key, const char **name)
{
    if (key < 0 || key >= NJAX_KEYS)
        return NULL;
    *name = jax_keys[key].key;
    return *(const bool *)((const char *)s + jax_keys[key].flag) ? jax_keys[key].other : jax_keys[key].usual;
}

bool cg_jax_spelling_set(const cg_jax_spelling *s)
{
    return s->all_gather_invarying || s->loss_replicated || s->backward_in_body;
}

/* jax KEY=VALUE {KEY=VALUE}: each key once. */
static bool parse_jax(cg_parser *p)
{
    bool seen[NJAX_KEYS] = {false};
    cg_p_advance(p);
    do {
        int k = jax_key(p);
        if (k < 0) {
            cg_error_at(&p->st, cg_p_here(p), "expected a jax key (all_gather, loss or backward), got %s",
                        cg_p_got(p));
            return false;
        }
        if (!key_then_equals(p, &seen[k], jax_keys[k].key))
            return false;
        bool usual = cg_p_is_name(p, jax_keys[k].usual), other = cg_p_is_name(p, jax_keys[k].other);
        if (!usual && !other) {
            cg_error_at(&p->st, cg_p_here(p), "expected %s=%s or %s=%s, got %s", jax_keys[k].key,
                        jax_keys[k].usual, jax_keys[k].key, jax_keys[k].other, cg_p_got(p));
            return false;
        }
        *(bool *)((char *)&p->c->jax + jax_keys[k].flag) = other;
        cg_p_advance(p);
    } while (!cg_p_failed(p) && cg_p_tok(p)->kind == CG_TOK_NAME);
    return !cg_p_failed(p);
}

bool cg_parse_header(cg_parser *p)
{
    int i = header_index(cg_p_tok(p)), slot = header_slots[i];
    if (p->hdr_line[slot]) {
        cg_error_at(&p->st, cg_p_here(p),
                    "expected a single '%s' line, got a second one (first at %d:%d)",
                    slot == CG_HDR_WORLD ? "world' or 'worlds" : header_words[i], p->hdr_line[slot],
                    p->hdr_col[slot]);
        return false;
    }
    p->hdr_line[slot] = cg_p_tok(p)->line;
    p->hdr_col[slot] = cg_p_tok(p)->col;
    switch (slot) {
    case CG_HDR_CASE: return parse_case_name(p);
    case CG_HDR_SOURCE: return parse_source(p);
    case CG_HDR_WORLD: return parse_world_spec(p, cg_p_is_name(p, "worlds"));
    case CG_HDR_DTYPE: return parse_dtype(p);
    case CG_HDR_TOLERANCE: return parse_tolerance(p);
    case CG_HDR_JAX: return parse_jax(p);
    default: return parse_seed(p);
    }
}
