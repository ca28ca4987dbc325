/*
 * resolve.c - measure ways of turning reference addresses into object ids
 * on a real dump (item 3): the hash table (open addressing,
 * XXH3, batched prefetching probes), the run index the loader now builds
 * for Ruby's page-by-page layout (src/index/index.c), and a sort-based
 * join (radix-sort the objects by address, radix-sort the references by
 * target address, walk both in order, scatter the ids back).
 *
 *   resolve DUMP [RUNS]
 *
 * Loads DUMP with the library, takes its address column and rebuilds the
 * reference address list from the resolved references (the dump's own
 * order), then times each method RUNS times (default 3) on one and on two
 * threads and prints the best time of each (index build included).  All
 * methods must give the same id for every reference; the program fails if
 * they do not.
 *
 * Links the internal static library, so the index code timed is exactly
 * the code the loader runs.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/model/model.h"
#include "../src/index/index.h"

static double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *
xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "resolve: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

/* ---------------------------------------------------------------- */
/* hash: the library's index                                         */
/* ---------------------------------------------------------------- */

typedef struct probe_arg {
    const hscope_heap_t *h;
    const uint64_t *a;
    uint32_t *out;
    size_t n;
} probe_arg;

static void *
probe_part(void *arg)
{
    probe_arg *p = arg;
    hscope__index_find_batch(p->h, p->a, p->out, p->n);
    return NULL;
}

static void
probe_all(const hscope_heap_t *h, const uint64_t *refs, size_t m, uint32_t *out, int threads)
{
    if (threads == 1) {
        hscope__index_find_batch(h, refs, out, m);
    } else {
        pthread_t th;
        probe_arg a = { h, refs + m / 2, out + m / 2, m - m / 2 };
        pthread_create(&th, NULL, probe_part, &a);
        hscope__index_find_batch(h, refs, out, m / 2);
        pthread_join(th, NULL);
    }
}

/* The hash table (what the loader falls back to), whatever h uses. */
static double
run_hash(hscope_heap_t *h, const uint64_t *refs, size_t m, uint32_t *out, int threads)
{
    hscope__run *runs = h->runs;
    h->runs = NULL; /* lookups go to the hash table */
    double t0 = now();
    hscope_error err;
    hscope_error_init(&err);
    uint64_t dups;
    if (hscope__index_hash_table(h, &h->mem, &h->index, &h->index_mask, &dups, &err) !=
        HSCOPE_OK) {
        fprintf(stderr, "resolve: index build failed: %s\n", err.message);
        exit(2);
    }
    probe_all(h, refs, m, out, threads);
    double t = now() - t0;
    hscope__free(&h->mem, h->index);
    h->index = NULL;
    h->runs = runs;
    return t;
}

/* What the loader builds (the run index when the layout allows). */
static double
run_loader(hscope_heap_t *h, const uint64_t *refs, size_t m, uint32_t *out, int threads,
           int *runs_used)
{
    hscope__index_drop_runs(h);
    hscope__free(&h->mem, h->index);
    h->index = NULL;
    double t0 = now();
    hscope_error err;
    hscope_error_init(&err);
    if (hscope__index_build(h, &err) != HSCOPE_OK) {
        fprintf(stderr, "resolve: index build failed: %s\n", err.message);
        exit(2);
    }
    probe_all(h, refs, m, out, threads);
    *runs_used = h->runs != NULL;
    return now() - t0;
}

/* ---------------------------------------------------------------- */
/* sort: LSD radix sort of packed (key << 32 | payload) records       */
/* ---------------------------------------------------------------- */

#define MAX_DIGIT 13

typedef struct sort_arg {
    uint64_t *a, *tmp;
    size_t n;
    unsigned bits; /* key bits above bit 32 */
    unsigned digit;
} sort_arg;

/* Sort a[0..n) by bits [32, 32 + bits), `digit` bits a pass; result in a. */
static void
radix(uint64_t *a, uint64_t *tmp, size_t n, unsigned bits, unsigned digit)
{
    uint64_t *src = a, *dst = tmp;
    const unsigned NB = 1u << digit;
    static _Thread_local size_t cnt[1u << MAX_DIGIT];
    for (unsigned shift = 32; shift < 32 + bits; shift += digit) {
        memset(cnt, 0, NB * sizeof(size_t));
        for (size_t i = 0; i < n; i++)
            cnt[(src[i] >> shift) & (NB - 1)]++;
        size_t sum = 0;
        for (unsigned d = 0; d < NB; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & (NB - 1)]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof(uint64_t));
}

static void *
sort_part(void *arg)
{
    sort_arg *s = arg;
    radix(s->a, s->tmp, s->n, s->bits, s->digit);
    return NULL;
}

/*
 * Keys: (address - lo) >> shift, which must fit 32 bits (checked by the
 * caller).  Object payload: id; reference payload: its position.  The
 * object sort is stable, so among equal addresses the last id comes last
 * and wins, as in the index ("repeated address: last wins").
 */
static double
run_sort(const uint64_t *addr, size_t n, const uint64_t *refs, size_t m, uint32_t *out,
         uint64_t lo, uint64_t hi, unsigned shift, unsigned bits, unsigned digit, int threads)
{
    double t0 = now();
    uint64_t *ob = xmalloc(n * 8), *ot = xmalloc(n * 8);
    uint64_t *rb = xmalloc(m * 8), *rt = xmalloc(m * 8);
    uint64_t lowmask = ((uint64_t)1 << shift) - 1;
    for (size_t i = 0; i < n; i++)
        ob[i] = ((addr[i] - lo) >> shift) << 32 | (uint64_t)i;
    size_t k = 0;
    for (size_t j = 0; j < m; j++) {
        uint64_t a = refs[j];
        if (a < lo || a > hi || ((a - lo) & lowmask)) {
            out[j] = HSCOPE_ID_NONE;
            continue;
        }
        rb[k++] = ((a - lo) >> shift) << 32 | (uint64_t)j;
    }
    if (threads == 1) {
        radix(ob, ot, n, bits, digit);
        radix(rb, rt, k, bits, digit);
    } else {
        pthread_t th;
        sort_arg s = { rb, rt, k, bits, digit };
        pthread_create(&th, NULL, sort_part, &s);
        radix(ob, ot, n, bits, digit);
        pthread_join(th, NULL);
    }
    /* merge join; equal object keys: the last in sorted order wins */
    size_t i = 0;
    for (size_t j = 0; j < k; j++) {
        uint64_t key = rb[j] >> 32;
        while (i < n && (ob[i] >> 32) < key)
            i++;
        size_t e = i;
        while (e + 1 < n && (ob[e + 1] >> 32) == key)
            e++;
        out[(uint32_t)rb[j]] = i < n && (ob[e] >> 32) == key ? (uint32_t)ob[e] : HSCOPE_ID_NONE;
    }
    free(ob);
    free(ot);
    free(rb);
    free(rt);
    return now() - t0;
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: resolve DUMP [RUNS]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    hscope_heap_t *h;
    hscope_error err;
    hscope_error_init(&err);
    if (hscope_heap_open_file(&h, argv[1], NULL, &err) != HSCOPE_OK) {
        fprintf(stderr, "resolve: %s: %s\n", argv[1], err.message);
        return 2;
    }
    size_t n = h->n, m = h->nedges;
    uint64_t *refs = xmalloc(m * 8);
    for (size_t k = 0; k < m; k++)
        refs[k] = h->addr[h->edges[k]];
    uint64_t lo = UINT64_MAX, hi = 0, bitsor = 0;
    for (size_t i = 0; i < n; i++) {
        lo = h->addr[i] < lo ? h->addr[i] : lo;
        hi = h->addr[i] > hi ? h->addr[i] : hi;
    }
    for (size_t i = 0; i < n; i++)
        bitsor |= h->addr[i] - lo;
    unsigned shift = bitsor ? (unsigned)__builtin_ctzll(bitsor) : 0;
    uint64_t span = n ? (hi - lo) >> shift : 0;
    unsigned bits = span ? 64 - (unsigned)__builtin_clzll(span) : 1;
    if (bits > 32) {
        fprintf(stderr, "resolve: address span needs %u key bits (> 32): not measured\n", bits);
        return 2;
    }
    uint32_t *oh = xmalloc(m * 4), *os = xmalloc(m * 4);
    printf("objects %zu, references %zu, key bits %u (shift %u); best of %d, interleaved\n",
           n, m, bits, shift, runs);
    uint32_t *ol = xmalloc(m * 4);
    int runs_used = 0;
    for (int threads = 1; threads <= 2; threads++) {
        double bh = 1e9, bl = 1e9, bs[2] = { 1e9, 1e9 };
        const unsigned digits[2] = { 11, 13 };
        for (int r = 0; r < runs; r++) {
            double th = run_hash(h, refs, m, oh, threads);
            bh = th < bh ? th : bh;
            double tl = run_loader(h, refs, m, ol, threads, &runs_used);
            bl = tl < bl ? tl : bl;
            if (memcmp(oh, ol, m * 4) != 0) {
                fprintf(stderr, "resolve: the loader's index and the hash table disagree\n");
                return 1;
            }
            for (int d = 0; d < 2; d++) {
                double ts = run_sort(h->addr, n, refs, m, os, lo, hi, shift, bits, digits[d],
                                     threads);
                bs[d] = ts < bs[d] ? ts : bs[d];
                if (memcmp(oh, os, m * 4) != 0) {
                    size_t k = 0;
                    while (oh[k] == os[k])
                        k++;
                    fprintf(stderr, "resolve: methods disagree at reference %zu: %u vs %u\n",
                            k, oh[k], os[k]);
                    return 1;
                }
            }
        }
        printf("%d thread%s: hash table %.3f s; %s %.3f s = %.2fx hash; "
               "sort, %u-bit digits (%u passes) %.3f s = %.2fx hash, "
               "%u-bit digits (%u passes) %.3f s = %.2fx hash\n",
               threads, threads > 1 ? "s" : "", bh,
               runs_used ? "run index" : "loader (hash: layout unsuited to runs)", bl, bl / bh,
               digits[0], (bits + digits[0] - 1) / digits[0], bs[0], bs[0] / bh, digits[1],
               (bits + digits[1] - 1) / digits[1], bs[1], bs[1] / bh);
    }
    size_t cap = 1024;
    while (cap < n * 2)
        cap *= 2;
    printf("memory: hash table %.1f MB, run index %.2f MB, sort (transient) %.1f MB\n",
           (double)cap * 4 / 1e6, runs_used ? (double)hscope__index_bytes(h) / 1e6 : 0.0,
           (double)(2 * n + 2 * m) * 8 / 1e6);
    free(ol);
    free(refs);
    free(oh);
    free(os);
    hscope_heap_free(h);
    return 0;
}
