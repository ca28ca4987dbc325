/*
 * index.c - address -> id (open addressing, linear probing, XXH3 of the
 * address; load factor <= 1/2) and the lazily built reverse references.
 */
#include <string.h>

#include "../model/model.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline size_t
slot_of(uint64_t a, size_t mask)
{
    return (size_t)XXH3_64bits(&a, sizeof(a)) & mask;
}

#define BATCH 16

hscope_status
hscope__index_build(hscope_heap_t *h, hscope_error *err)
{
    size_t cap = 1024;
    while (cap < (size_t)h->n * 2)
        cap *= 2;
    h->index = hscope__calloc(&h->mem, cap, sizeof(uint32_t));
    if (!h->index)
        return hscope__nomem(err, cap * sizeof(uint32_t));
    h->index_mask = cap - 1;
    size_t slots[BATCH];
    for (uint32_t i = 0; i < h->n; i++) {
        /* hash a batch ahead and prefetch its slots: the table is far
         * larger than the caches, so this turns serial misses into
         * parallel ones */
        if (i % BATCH == 0) {
            for (uint32_t j = 0; j < BATCH && i + j < h->n; j++) {
                slots[j] = slot_of(h->addr[i + j], h->index_mask);
                __builtin_prefetch(&h->index[slots[j]], 1);
            }
        }
        uint64_t a = h->addr[i];
        size_t s = slots[i % BATCH];
        for (;;) {
            uint32_t v = h->index[s];
            if (v == 0) {
                h->index[s] = i + 1;
                break;
            }
            if (h->addr[v - 1] == a) { /* repeated address: last wins */
                h->index[s] = i + 1;
                h->duplicates++;
                break;
            }
            s = (s + 1) & h->index_mask;
        }
    }
    return HSCOPE_OK;
}

uint32_t
hscope__index_find(const hscope_heap_t *h, uint64_t a)
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

void
hscope__index_find_batch(const hscope_heap_t *h, const uint64_t *a,
                         uint32_t *out, size_t n)
{
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
