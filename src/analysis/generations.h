/*
 * generations.h - objects by allocation generation (generations.c).
 */
#ifndef HSCOPE_ANALYSIS_GENERATIONS_H
#define HSCOPE_ANALYSIS_GENERATIONS_H

#include "../model/model.h"

/* Objects by allocation generation (generations.c): generation value[k]
 * holds ids[start[k]..start[k+1]) (ascending); untraced objects apart. */
typedef struct hscope__gens {
    hscope__mem *mem;
    uint32_t *ids;
    uint64_t *start;
    uint32_t *value;
    size_t ngens;
    uint64_t untraced, untraced_memsize;
    uint64_t excluded;          /* the dumper's objects left out */
} hscope__gens;
/* Unless keep_dumper, the objects the dumper allocated (origin.c's rule)
 * are left out and counted in g->excluded. */
hscope_status hscope__gens_compute(hscope__gens *g, hscope_heap_t *h, int keep_dumper,
                                   hscope_error *err);
void hscope__gens_free(hscope__gens *g);

#endif
