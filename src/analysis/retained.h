/*
 * retained.h - retained size per group (retained.c).
 */
#ifndef HSCOPE_ANALYSIS_RETAINED_H
#define HSCOPE_ANALYSIS_RETAINED_H

#include "heapscope/heapscope.h"

/* Ruby's allocation tracer of a tree's heap (the first, if several), or
 * HSCOPE_ID_NONE; the tree's top objects by retained size without it
 * (`out` holds max + 1; tracer HSCOPE_ID_NONE: all of them). */
hscope_id hscope__domtree_tracer(const hscope_domtree_t *t);
uint64_t hscope__domtree_top_app(const hscope_domtree_t *t, hscope_id *out, uint64_t max,
                                 hscope_id tracer);

/* retained.c: retained size per group (hscope_domtree_tally()); opts
 * checked by the caller. */
hscope_status hscope__domtree_tally(hscope_tally_t **out, hscope_domtree_t *t,
                                    const char *key, const hscope_tally_options *opts,
                                    hscope_error *err);

#endif
