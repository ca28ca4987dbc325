/*
 * index.c - address -> id: a run index for dumps laid out as Ruby writes
 * them, else a hash table (open addressing, linear probing, XXH3 of the
 * address; load factor <= 1/2); and the lazily built reverse references.
 */
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "../index/index.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline size_t
slot_of(uint64_t a, size_t mask)
{
    return (size_t)XXH3_64bits(&a, sizeof(a)) & mask;
}

#define BATCH 16

/* ------------------------------------------------------------------ */
/* hash table                                                          */
/* ------------------------------------------------------------------ */

hscope_status
hscope__index_hash_table(const hscope_heap_t *h, hscope__mem *m, uint32_t **table,
                         size_t *maskp, uint64_t *duplicates, hscope_error *err)
{
    size_t cap = 1024;
    while (cap < (size_t)h->n * 2)
        cap *= 2;
    uint32_t *index = hscope__calloc(m, cap, sizeof(uint32_t));
    if (!index)
        return hscope__nomem(err, cap * sizeof(uint32_t));
    size_t mask = cap - 1;
    uint64_t dups = 0;
    size_t slots[BATCH];
    for (uint32_t i = 0; i < h->n; i++) {
        /* hash a batch ahead and prefetch its slots: the table is far
         * larger than the caches, so this turns serial misses into
         * parallel ones */
        if (i % BATCH == 0) {
            for (uint32_t j = 0; j < BATCH && i + j < h->n; j++) {
                slots[j] = slot_of(h->addr[i + j], mask);
                __builtin_prefetch(&index[slots[j]], 1);
            }
        }
        uint64_t a = h->addr[i];
        size_t s = slots[i % BATCH];
        for (;;) {
            uint32_t v = index[s];
            if (v == 0) {
                index[s] = i + 1;
                break;
            }
            if (h->addr[v - 1] == a) { /* repeated address: last wins */
                index[s] = i + 1;
                dups++;
                break;
            }
            s = (s + 1) & mask;
        }
    }
    *table = index;
    *maskp = mask;
    *duplicates = dups;
    return HSCOPE_OK;
}

static uint32_t
hash_find(const hscope_heap_t *h, uint64_t a)
{
    size_t s = slot_of(a, h->index_mask);
    for (;;) {
        uint32_t v = h->index[s];
        if (v == 0)
            return HSCOPE_ID_NONE;
        if (h->addr[v - 1] == a)
            return v - 1;
        s = (s + 1) & h->index_mask;
    }
}

/* ------------------------------------------------------------------ */
/* run index                                                           */
/* ------------------------------------------------------------------ */

/*
 * Ruby dumps its heap page by page, each page's slots in address order,
 * and a page (16 KiB up to 3.1, 64 KiB from 3.2, always 16 KiB aligned) is
 * never split.  Cut the address column, in dump order, wherever the
 * address does not rise or crosses a 16 KiB boundary: the pieces ("runs")
 * of a Ruby dump then cover disjoint address ranges.  A directory over the
 * address span finds the run of an address; each run keeps a bitmap of
 * the slots present (at the run's smallest address step), whose rank is
 * the id.  A lookup then reads only the run table, the directory and the
 * bitmaps (well under 1 MB for a 1 GB dump: cache resident) and never the
 * 22 MB address column or a 34 MB hash table, and building it is one pass
 * over the addresses instead of 2.7M random inserts.
 *
 * Any dump whose runs are not disjoint (repeated addresses included, so a
 * repeat always falls back), or that cuts into too many runs, gets the
 * hash table instead: lookups give the same ids either way.
 */
#define RUN_BLOCK 14                    /* 16 KiB */
#define RUN_MAX_SLOTS 4096              /* bitmap bits per run at most */

/* Bits set in x (the baseline x86-64 target has no popcnt instruction and
 * the compiler's fallback is a library call). */
static inline uint32_t
ones(uint64_t x)
{
#if defined(__POPCNT__)
    return (uint32_t)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

static int
cmp_run(const void *a, const void *b)
{
    const hscope__run *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void
hscope__index_drop_runs(hscope_heap_t *h)
{
    hscope__free(&h->mem, h->runs);
    hscope__free(&h->mem, h->rdir);
    hscope__free(&h->mem, h->rbits);
    hscope__free(&h->mem, h->rrank);
    h->runs = NULL;
    h->rdir = NULL;
    h->rbits = NULL;
    h->rrank = NULL;
    h->nruns = 0;
    h->nrdir = 0;
}

/* Bitmap words of a run with slots of `stride` bytes. */
static inline size_t
run_words(const hscope__run *r, uint64_t stride)
{
    return (size_t)((r->hi - r->lo) / stride / 64) + 1;
}

static inline int
run_cut(const uint64_t *addr, uint32_t i)
{
    return addr[i] <= addr[i - 1] || ((addr[i] ^ addr[i - 1]) >> RUN_BLOCK) != 0;
}

/* Pass 1: the address column cut into runs, sorted by address, in h->runs;
 * each run's `stride` holds its smallest step for now (0: a single
 * address).  1: done; 0: too many runs, or runs that overlap; -1: out of
 * memory. */
static int
runs_cut(hscope_heap_t *h)
{
    const uint64_t *addr = h->addr;
    uint32_t n = h->n;
    size_t nr = 0, cap = 0, max_runs = (size_t)n / 8 + 64;
    hscope__run *runs = NULL;
    hscope_error e;
    hscope__error_init(&e);
    uint32_t s = 0;
    uint64_t md = UINT64_MAX;
    for (uint32_t i = 1; i <= n; i++) {
        if (i < n && !run_cut(addr, i)) {
            uint64_t d = addr[i] - addr[i - 1];
            md = d < md ? d : md;
            continue;
        }
        if (nr == max_runs) {
            hscope__free(&h->mem, runs);
            return 0;
        }
        if (hscope__grow(&h->mem, (void **)&runs, &cap, nr + 1, sizeof(*runs), &e) !=
            HSCOPE_OK) {
            hscope__free(&h->mem, runs);
            return -1;
        }
        runs[nr++] = (hscope__run){ .lo = addr[s], .hi = addr[i - 1], .start = s, .end = i,
                                    .stride = md == UINT64_MAX ? 0 : (uint32_t)md };
        s = i;
        md = UINT64_MAX;
    }
    hscope__run *fit = hscope__realloc(&h->mem, runs, nr * sizeof(*runs));
    if (fit) /* give back the spare capacity */
        runs = fit;
    h->runs = runs;
    h->nruns = (uint32_t)nr;
    qsort(runs, nr, sizeof(*runs), cmp_run);
    for (size_t k = 1; k < nr; k++)
        if (runs[k].lo <= runs[k - 1].hi) {
            hscope__index_drop_runs(h);
            return 0;
        }
    return 1;
}

/* The directory: bucket b covers [rmin + b << shift, ...) and holds the
 * first run that ends at or after the bucket's start; at most 4 buckets a
 * run.  Buckets are aligned blocks of 16 KiB or more, and a run never
 * crosses a 16 KiB boundary (run_cut), so the runs of bucket b are exactly
 * [rdir[b], rdir[b + 1]): mostly one.  0: out of memory. */
static int
runs_directory(hscope_heap_t *h)
{
    const hscope__run *runs = h->runs;
    size_t nr = h->nruns;
    unsigned shift = RUN_BLOCK;
    uint64_t base, span;
    for (;;) {
        base = runs[0].lo >> shift << shift;
        span = runs[nr - 1].hi - base;
        if (shift == 63 || (span >> shift) < 4 * (uint64_t)nr)
            break;
        shift++;
    }
    h->rmin = base;
    h->rshift = shift;
    h->nrdir = (size_t)(span >> shift) + 1;
    if (!(h->rdir = hscope__malloc(&h->mem, h->nrdir * sizeof(uint32_t))))
        return 0;
    size_t k = 0;
    for (size_t b = 0; b < h->nrdir; b++) {
        uint64_t from = h->rmin + ((uint64_t)b << shift);
        while (k < nr && runs[k].hi < from)
            k++;
        h->rdir[b] = (uint32_t)k;
    }
    return 1;
}

/* Run r's bitmap at h->rbits + words (zeroed, room for it), if its
 * addresses are a whole number of steps apart: 1, with r's stride, inverse
 * and bitmap set; else 0 (r keeps stride 0: binary search), the words
 * zeroed again. */
static inline int
run_bitmap(hscope_heap_t *h, hscope__run *r, uint64_t step, size_t words, size_t nw)
{
    const uint64_t *addr = h->addr;
    uint64_t *bits = h->rbits + words, slot = 0;
    bits[0] |= 1;
    for (uint32_t i = r->start + 1; i < r->end; i++) {
        uint64_t d = addr[i] - addr[i - 1];
        if (d != step) {
            if (d % step != 0) { /* steps of unequal size */
                memset(bits, 0, nw * sizeof(uint64_t));
                return 0;
            }
            slot += d / step - 1;
        }
        slot++;
        bits[slot / 64] |= (uint64_t)1 << (slot % 64);
    }
    r->stride = (uint32_t)step;
    r->inv = (((uint64_t)1 << 48) + step - 1) / step;
    r->bm = (uint32_t)words;
    uint32_t acc = 0;
    for (size_t w = 0; w < nw; w++) {
        h->rrank[words + w] = acc;
        acc += ones(bits[w]);
    }
    return 1;
}

/* Pass 2: the runs' bitmaps, in address order, within a budget of about 2
 * bits an object (the arrays are sized for the budget).  0: out of
 * memory. */
static int
runs_bitmaps(hscope_heap_t *h)
{
    size_t words = 0, budget = (size_t)h->n / 32 + 1024;
    h->rbits = hscope__calloc(&h->mem, budget, sizeof(uint64_t));
    h->rrank = hscope__malloc(&h->mem, budget * sizeof(uint32_t));
    if (!h->rbits || !h->rrank)
        return 0;
    for (size_t k = 0; k < h->nruns; k++) {
        hscope__run *r = &h->runs[k];
        uint64_t step = r->stride;
        r->stride = 0;
        if (!step || (r->hi - r->lo) / step >= RUN_MAX_SLOTS ||
            words + run_words(r, step) > budget)
            continue; /* binary search for this run */
        size_t nw = run_words(r, step);
        if (run_bitmap(h, r, step, words, nw))
            words += nw;
    }
    if (words == 0) {
        hscope__free(&h->mem, h->rbits);
        hscope__free(&h->mem, h->rrank);
        h->rbits = NULL;
        h->rrank = NULL;
    } else if (words < budget) { /* give back the unused part */
        uint64_t *b = hscope__realloc(&h->mem, h->rbits, words * sizeof(uint64_t));
        uint32_t *r = hscope__realloc(&h->mem, h->rrank, words * sizeof(uint32_t));
        h->rbits = b ? b : h->rbits;
        h->rrank = r ? r : h->rrank;
    }
    return 1;
}

/* 1: built; 0: the layout does not suit (hash instead); -1: out of memory.
 * Two passes over the address column: one cuts it into runs (noting each
 * run's smallest step), one builds each run's bitmap right after checking
 * its steps, while the run's addresses are still in L1. */
static int
runs_build(hscope_heap_t *h)
{
    if (h->n == 0)
        return 0;
    int rc = runs_cut(h);
    if (rc != 1)
        return rc;
    if (!runs_directory(h) || !runs_bitmaps(h)) {
        hscope__index_drop_runs(h);
        return -1;
    }
    return 1;
}

static inline uint32_t
run_find(const hscope_heap_t *h, uint64_t a)
{
    if (a < h->rmin)
        return HSCOPE_ID_NONE;
    uint64_t b = (a - h->rmin) >> h->rshift;
    if (b >= h->nrdir)
        return HSCOPE_ID_NONE;
    /* the bucket's runs are [rdir[b], rdir[b + 1]); a lies in the first
     * of them that ends at or after it, if in any */
    uint32_t lo = h->rdir[b];
    uint32_t end = b + 1 < h->nrdir ? h->rdir[b + 1] : h->nruns;
    if (HS_UNLIKELY(end - lo > 1)) {
        uint32_t hi = end;
        while (lo < hi) {
            uint32_t m = lo + (hi - lo) / 2;
            if (h->runs[m].hi < a)
                lo = m + 1;
            else
                hi = m;
        }
    }
    if (lo == end || h->runs[lo].hi < a)
        return HSCOPE_ID_NONE;
    const hscope__run *r = &h->runs[lo];
    if (a < r->lo)
        return HSCOPE_ID_NONE;
    if (r->end - r->start == 1) /* lo == a == hi */
        return r->start;
    if (r->stride) {
        /* a - lo < 2^14 (one 16 KiB block): off * inv >> 48 is exactly
         * off / stride (the rounding error is below 2^-34, the distance
         * to the next integer at least 2^-14) */
        uint64_t off = a - r->lo;
        uint32_t slot = (uint32_t)((off * r->inv) >> 48);
        if (off != (uint64_t)slot * r->stride)
            return HSCOPE_ID_NONE;
        uint64_t w = h->rbits[r->bm + slot / 64], bit = (uint64_t)1 << (slot % 64);
        if (!(w & bit))
            return HSCOPE_ID_NONE;
        return r->start + h->rrank[r->bm + slot / 64] + ones(w & (bit - 1));
    }
    uint32_t x = r->start, y = r->end;
    while (x < y) {
        uint32_t m = x + (y - x) / 2;
        if (h->addr[m] < a)
            x = m + 1;
        else
            y = m;
    }
    return x < r->end && h->addr[x] == a ? x : HSCOPE_ID_NONE;
}

/* ------------------------------------------------------------------ */
/* either                                                              */
/* ------------------------------------------------------------------ */

hscope_status
hscope__index_build(hscope_heap_t *h, hscope_error *err)
{
    int rc = runs_build(h);
    if (rc < 0)
        return hscope__nomem(err, (size_t)h->n / 8 * sizeof(hscope__run));
    if (rc > 0) {
        h->duplicates = 0; /* disjoint rising runs: no address repeats */
        return HSCOPE_OK;
    }
    return hscope__index_hash_table(h, &h->mem, &h->index, &h->index_mask, &h->duplicates,
                                    err);
}

size_t
hscope__index_bytes(const hscope_heap_t *h)
{
    return hscope__msize(h->index) + hscope__msize(h->runs) + hscope__msize(h->rdir) +
           hscope__msize(h->rbits) + hscope__msize(h->rrank);
}

uint32_t
hscope__index_find(const hscope_heap_t *h, uint64_t a)
{
    return h->runs ? run_find(h, a) : hash_find(h, a);
}

void
hscope__index_find_batch(const hscope_heap_t *h, const uint64_t *a,
                         uint32_t *out, size_t n)
{
    if (h->runs) {
        /* everything a lookup reads is cache resident: no batching */
        for (size_t j = 0; j < n; j++)
            out[j] = run_find(h, a[j]);
        return;
    }
    size_t slots[BATCH];
    uint32_t first[BATCH];
    while (n > 0) {
        size_t m = n < BATCH ? n : BATCH;
        for (size_t j = 0; j < m; j++) {
            slots[j] = slot_of(a[j], h->index_mask);
            __builtin_prefetch(&h->index[slots[j]]);
        }
        for (size_t j = 0; j < m; j++) {
            first[j] = h->index[slots[j]];
            if (first[j])
                __builtin_prefetch(&h->addr[first[j] - 1]);
        }
        for (size_t j = 0; j < m; j++) {
            uint32_t v = first[j];
            size_t s = slots[j];
            uint64_t x = a[j];
            for (;;) {
                if (v == 0) {
                    out[j] = HSCOPE_ID_NONE;
                    break;
                }
                if (h->addr[v - 1] == x) {
                    out[j] = v - 1;
                    break;
                }
                s = (s + 1) & h->index_mask;
                v = h->index[s];
            }
        }
        a += m;
        out += m;
        n -= m;
    }
}

static hscope_status
build_reverse(hscope_heap_t *h, hscope_error *err)
{
    uint32_t *start = hscope__calloc(&h->mem, (size_t)h->n + 1, sizeof(uint32_t));
    uint32_t *src = hscope__malloc(&h->mem, (h->nedges + 1) * sizeof(uint32_t));
    if (!start || !src) {
        hscope__free(&h->mem, start);
        hscope__free(&h->mem, src);
        return hscope__nomem(err, (h->nedges + 1) * sizeof(uint32_t));
    }
    for (uint64_t k = 0; k < h->nedges; k++)
        start[h->edges[k] + 1]++;
    for (uint32_t i = 0; i < h->n; i++)
        start[i + 1] += start[i];
    /* fill with a moving cursor per target, then shift back */
    for (uint32_t i = 0; i < h->n; i++)
        for (uint32_t k = h->edge_start[i]; k < h->edge_start[i + 1]; k++)
            src[start[h->edges[k]]++] = i;
    for (uint32_t i = h->n; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    h->rev_start = start;
    h->rev_src = src;
    return HSCOPE_OK;
}

hscope_status
hscope__reverse_build(hscope_heap_t *h, hscope_error *err)
{
    if (atomic_load_explicit(&h->rev_ready, memory_order_acquire))
        return HSCOPE_OK;
    pthread_mutex_lock(&h->rev_lock);
    hscope_status st = HSCOPE_OK;
    if (!atomic_load_explicit(&h->rev_ready, memory_order_relaxed)) {
        st = build_reverse(h, err);
        if (st == HSCOPE_OK)
            atomic_store_explicit(&h->rev_ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&h->rev_lock);
    return st;
}
