/*
 * retained.h - retained size per group (retained.c).
 */
#ifndef HSCOPE_ANALYSIS_RETAINED_H
#define HSCOPE_ANALYSIS_RETAINED_H

#include "heapscope/heapscope.h"

/* retained.c: retained size per group (hscope_domtree_tally()); opts
 * checked by the caller. */
hscope_status hscope__domtree_tally(hscope_tally_t **out, hscope_domtree_t *t,
                                    const char *key, const hscope_tally_options *opts,
                                    hscope_error *err);

#endif
