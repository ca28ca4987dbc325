/*
 * index.h - the address index (index.c): from an object's address to its
 * id, as a run index where the dump's layout allows it, else a hash table;
 * and the reverse references.  One layer with model/ (model.h): the loader
 * builds it, and it works on the heap's columns.
 */
#ifndef HSCOPE_INDEX_H
#define HSCOPE_INDEX_H

#include "../model/model.h"

/* hscope__index_build makes the run index when
 * the dump's layout allows it, else the hash table. */
typedef struct hscope__run {
    uint64_t lo, hi;                /* first and last address */
    uint32_t start, end;            /* ids [start, end), addresses rising */
    uint32_t stride;                /* slot spacing of the bitmap; 0: none */
    uint32_t bm;                    /* its first word in rbits / rrank */
    uint64_t inv;                   /* ceil(2^48 / stride): offset / stride
                                       by a multiply (offsets < 2^14) */
} hscope__run;
hscope_status hscope__index_build(hscope_heap_t *h, hscope_error *err);
/* A hash table for the saved index format (which stores one), built from
 * the address column into *table (hscope__free it) whatever index h uses. */
hscope_status hscope__index_hash_table(const hscope_heap_t *h, hscope__mem *m,
                                       uint32_t **table, size_t *mask,
                                       uint64_t *duplicates, hscope_error *err);
/* Free the run index (the loader then rebuilds or falls back). */
void hscope__index_drop_runs(hscope_heap_t *h);
/* Bytes the address index takes. */
size_t hscope__index_bytes(const hscope_heap_t *h);
uint32_t hscope__index_find(const hscope_heap_t *h, uint64_t addr);
/* Look up n addresses at once (prefetching); out[i] = id or ID_NONE.  out
 * may alias a as long as it does not run ahead of it (in-place use). */
void hscope__index_find_batch(const hscope_heap_t *h, const uint64_t *a,
                              uint32_t *out, size_t n);
/* Reverse references: referrers of every object (built once, lazily). */
hscope_status hscope__reverse_build(hscope_heap_t *h, hscope_error *err);

#endif
