/* big_blocks.c — see big_blocks.h. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "big_blocks.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct cached {
    void *block;
    size_t cap;
    uint64_t step; /* the step during which it was given back */
} cached;

/* One thread's: owned by its pthread key, unmapped by drop_cache at exit. */
typedef struct big_cache {
    cached *v;
    int n, cap;
    uint64_t step; /* steps ended so far on this thread */
    int open;      /* graphs open on this thread */
} big_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool have_key;

static void drop_cache(void *arg)
{
    big_cache *c = arg;
    for (int i = 0; i < c->n; i++)
        munmap(c->v[i].block, c->v[i].cap);
    free(c->v);
    free(c);
}

static void make_key(void) { have_key = pthread_key_create(&cache_key, drop_cache) == 0; }

/* This thread's cache, or NULL when none can be made (then blocks are
 * unmapped as soon as they are given back: correct, only slower). */
static big_cache *my_cache(void)
{
    pthread_once(&cache_once, make_key);
    if (!have_key)
        return NULL;
    big_cache *c = pthread_getspecific(cache_key);
    if (!c && (c = calloc(1, sizeof *c)) && pthread_setspecific(cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

static size_t page_round(size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t p = page > 0 ? (size_t)page : 4096;
    return n > SIZE_MAX - p ? 0 : (n + p - 1) / p * p;
}

/* The newest cached block of exactly `want` bytes, out of the cache; NULL
 * when none (its pages are warm: the newest first). */
static void *take_cached(size_t want)
{
    big_cache *c = my_cache();
    for (int i = c ? c->n - 1 : -1; i >= 0; i--)
        if (c->v[i].cap == want) {
            void *b = c->v[i].block;
            c->v[i] = c->v[--c->n];
            return b;
        }
    return NULL;
}

static void *map_fresh(size_t want)
{
    void *b = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return b == MAP_FAILED ? NULL : b;
}

void *cg_big_alloc(size_t n, size_t *cap)
{
    size_t want = page_round(n);
    if (want == 0)
        return NULL;
    void *b = take_cached(want);
    if (b)
        memset(b, 0, n); /* the arena's contract: zeroed, as a fresh mapping is */
    else if (!(b = map_fresh(want)))
        return NULL;
    *cap = want;
    return b;
}

#define POISON_RUN 64 /* bytes: whole elements of every dtype, one cache line */

void *cg_big_alloc_unset(size_t n, size_t head, size_t *cap)
{
    size_t want = page_round(n), page = page_round(1);
    if (want == 0 || head > n)
        return NULL;
    void *b = take_cached(want);
    if (!b) {
        if (!(b = map_fresh(want)))
            return NULL;
        *cap = want;
        return b;
    }
    unsigned char *p = b;
    for (size_t at = 0; at < n; at += page)
        memset(p + at, 0xff, n - at < POISON_RUN ? n - at : POISON_RUN);
    memset(p + (n > POISON_RUN ? n - POISON_RUN : 0), 0xff, n > POISON_RUN ? POISON_RUN : n);
    memset(p, 0, head);
    *cap = want;
    return b;
}

void cg_big_free(void *block, size_t cap)
{
    big_cache *c = my_cache();
    if (c && c->n == c->cap) {
        int grown = c->cap ? 2 * c->cap : 16;
        cached *v = realloc(c->v, (size_t)grown * sizeof *v);
        if (v) {
            c->v = v;
            c->cap = grown;
        }
    }
    if (!c || c->n == c->cap) {
        munmap(block, cap);
        return;
    }
    c->v[c->n++] = (cached){block, cap, c->step};
}

void cg_big_enter(void)
{
    big_cache *c = my_cache();
    if (c)
        c->open++;
}

void cg_big_leave(void)
{
    big_cache *c = my_cache();
    if (!c || c->open == 0 || --c->open > 0)
        return;
    /* a step ends: what was given back before it began waited a whole step */
    for (int i = 0; i < c->n;)
        if (c->v[i].step < c->step) {
            munmap(c->v[i].block, c->v[i].cap);
            c->v[i] = c->v[--c->n];
        } else {
            i++;
        }
    c->step++;
}

void cg_big_trim(void)
{
    big_cache *c = my_cache();
    for (int i = 0; c && i < c->n; i++)
        munmap(c->v[i].block, c->v[i].cap);
    if (c)
        c->n = 0;
}

size_t cg_big_cached(size_t *bytes)
{
    big_cache *c = my_cache();
    *bytes = 0;
    for (int i = 0; c && i < c->n; i++)
        *bytes += c->v[i].cap;
    return c ? (size_t)c->n : 0;
}
