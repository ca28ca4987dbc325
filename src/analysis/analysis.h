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

/* Tally keys (order of the enum in tally.c). */
enum { HSCOPE__TK_TYPE, HSCOPE__TK_CLASS, HSCOPE__TK_FILE, HSCOPE__TK_FILE_LINE,
       HSCOPE__TK_SITE, HSCOPE__TK_METHOD, HSCOPE__TK_GENERATION, HSCOPE__TK_GEM };
int hscope__tally_key(const char *key);
void hscope__gem_of(const char *file, const char **gem, size_t *len);

/* Standalone tallies: rows added by text, then sorted. */
hscope_status hscope__tally_new(hscope_tally_t **out, const hscope_allocator *a,
                                hscope_error *err);
hscope_status hscope__tally_add(hscope_tally_t *t, const char *key, size_t len,
                                uint64_t count, uint64_t memsize,
                                hscope_error *err);
void hscope__tally_finish(hscope_tally_t *t, uint32_t sort, uint64_t top);

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
