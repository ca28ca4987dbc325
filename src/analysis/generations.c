/*
 * generations.c - objects grouped by allocation generation (heapy's
 * generation view): the traced objects in (generation, id) order.  A
 * counting sort when the newest generation is below the object count (as
 * in every real dump: generations are GC counts), else a comparison sort of
 * (generation, id) keys, so memory stays about 8 bytes per object whatever
 * generation numbers a dump claims (a forged one may say 4,294,967,294).
 * The dumper's own objects are left out and counted, as by every other
 * analysis (origin.c's rule), unless kept.
 */
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "generations.h"
#include "origin.h"

void
hscope__gens_free(hscope__gens *g)
{
    if (!g->mem)
        return;
    hscope__free(g->mem, g->ids);
    hscope__free(g->mem, g->start);
    hscope__free(g->mem, g->value);
    memset(g, 0, sizeof(*g));
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Generation boundaries of the sorted keys: value[k], start[k..k+1). */
static hscope_status
boundaries(hscope__gens *g, const uint64_t *keys, size_t nt, hscope_error *err)
{
    size_t ng = 0;
    for (size_t k = 0; k < nt; k++)
        ng += k == 0 || keys[k] >> 32 != keys[k - 1] >> 32;
    g->value = hscope__malloc(g->mem, (ng + 1) * sizeof(uint32_t));
    g->start = hscope__malloc(g->mem, (ng + 1) * sizeof(uint64_t));
    if (!g->value || !g->start)
        return hscope__nomem(err, ng * 12);
    size_t j = 0;
    for (size_t k = 0; k < nt; k++) {
        if (k == 0 || keys[k] >> 32 != keys[k - 1] >> 32) {
            g->value[j] = (uint32_t)(keys[k] >> 32);
            g->start[j++] = k;
        }
        g->ids[k] = (uint32_t)keys[k];
    }
    g->start[ng] = nt;
    g->ngens = ng;
    return HSCOPE_OK;
}

/* Object i is in a generation: traced, and not the dumper's left out. */
static inline int
kept(const hscope_heap_t *h, const uint8_t *dsite, uint32_t i)
{
    return h->gen[i] != HSCOPE__GEN_NONE && !(dsite && dsite[h->site[i]]);
}

/* Counting sort over generations 0..maxg (maxg < object count). */
static hscope_status
by_counting(hscope__gens *g, const hscope_heap_t *h, const uint8_t *dsite, uint32_t maxg,
            hscope_error *err)
{
    size_t ng = (size_t)maxg + 1;
    uint64_t *pos = hscope__calloc(g->mem, ng + 1, sizeof(uint64_t));
    if (!pos)
        return hscope__nomem(err, ng * 8);
    for (uint32_t i = 0; i < h->n; i++)
        if (kept(h, dsite, i))
            pos[h->gen[i] + 1]++;
    size_t used = 0;
    for (size_t k = 0; k < ng; k++) {
        used += pos[k + 1] != 0;
        pos[k + 1] += pos[k];
    }
    g->value = hscope__malloc(g->mem, (used + 1) * sizeof(uint32_t));
    g->start = hscope__malloc(g->mem, (used + 1) * sizeof(uint64_t));
    if (!g->value || !g->start) {
        hscope__free(g->mem, pos);
        return hscope__nomem(err, used * 12);
    }
    size_t j = 0;
    for (size_t k = 0; k < ng; k++)
        if (pos[k + 1] != pos[k]) {
            g->value[j] = (uint32_t)k;
            g->start[j++] = pos[k];
        }
    g->start[used] = pos[ng];
    g->ngens = used;
    for (uint32_t i = 0; i < h->n; i++) /* ascending ids within a generation */
        if (kept(h, dsite, i))
            g->ids[pos[h->gen[i]]++] = i;
    hscope__free(g->mem, pos);
    return HSCOPE_OK;
}

/* Per site: 1 if the dumper's (origin.c's rule); NULL when none is. */
static hscope_status
dumper_sites(hscope_heap_t *h, uint8_t **out, hscope_error *err)
{
    *out = NULL;
    uint8_t *d = hscope__calloc(&h->mem, h->nsites ? h->nsites : 1, 1);
    if (!d)
        return hscope__nomem(err, h->nsites);
    int any = 0;
    for (size_t s = 1; s < h->nsites; s++) {
        d[s] = (uint8_t)hscope__is_dumper(hscope__intern_str(&h->strings, h->site_file[s]),
                                          hscope__intern_str(&h->strings, h->site_method[s]));
        any |= d[s];
    }
    if (any)
        *out = d;
    else
        hscope__free(&h->mem, d);
    return HSCOPE_OK;
}

hscope_status
hscope__gens_compute(hscope__gens *g, hscope_heap_t *h, int keep_dumper, hscope_error *err)
{
    memset(g, 0, sizeof(*g));
    g->mem = &h->mem;
    uint8_t *dsite = NULL;
    hscope_status st0 = keep_dumper ? HSCOPE_OK : dumper_sites(h, &dsite, err);
    if (st0 != HSCOPE_OK)
        return st0;
    uint32_t n = h->n, maxg = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (dsite && dsite[h->site[i]]) {
            g->excluded++;
        } else if (h->gen[i] == HSCOPE__GEN_NONE) {
            g->untraced++;
            g->untraced_memsize += hscope__memsize(h, i);
        } else if (h->gen[i] > maxg) {
            maxg = h->gen[i];
        }
    }
    size_t nt = (size_t)(n - g->untraced - g->excluded);
    hscope_status st;
    if (nt && maxg < n) {
        g->ids = hscope__malloc(g->mem, (nt + 1) * sizeof(uint32_t));
        st = g->ids ? by_counting(g, h, dsite, maxg, err) : hscope__nomem(err, nt * 4);
        if (st != HSCOPE_OK)
            hscope__gens_free(g);
        hscope__free(&h->mem, dsite);
        return st;
    }
    uint64_t *keys = hscope__malloc(g->mem, (nt + 1) * sizeof(uint64_t));
    g->ids = hscope__malloc(g->mem, (nt + 1) * sizeof(uint32_t));
    if (!keys || !g->ids) {
        hscope__free(g->mem, keys);
        hscope__free(&h->mem, dsite);
        hscope__gens_free(g);
        return hscope__nomem(err, nt * 12);
    }
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (kept(h, dsite, i))
            keys[k++] = (uint64_t)h->gen[i] << 32 | i;
    hscope__free(&h->mem, dsite);
    qsort(keys, nt, sizeof(uint64_t), cmp_u64);
    st = boundaries(g, keys, nt, err);
    hscope__free(g->mem, keys);
    if (st != HSCOPE_OK)
        hscope__gens_free(g);
    return st;
}
