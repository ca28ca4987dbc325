/*
 * analysis.h - internal entry points shared by the analyses.
 */
#ifndef HSCOPE_ANALYSIS_H
#define HSCOPE_ANALYSIS_H

#include "../model/model.h"

hscope_status hscope__tally_run(hscope_tally_t **out, hscope_heap_t *heap,
                                const char *key,
                                const hscope_tally_options *opts,
                                const uint32_t *subset, size_t nsub,
                                int members, hscope_error *err);

/* A diff base: a loaded heap, or a dump path streamed with `load`. */
typedef struct hscope__diff_base {
    hscope_heap_t *heap;
    const char *path;
    const hscope_load_options *load;
} hscope__diff_base;

hscope_status hscope__diff_run(hscope_diff_t **out, hscope_heap_t *target,
                               const hscope__diff_base *ba,
                               const hscope__diff_base *bb,
                               const char *const names[3],
                               const hscope_diff_options *opts,
                               hscope_error *err);

#endif
