/*
 * tally_api.c - the exported tally functions: the group-by over a loaded
 * heap or a subset (analysis/tally.c) and the streamed fold of a dump
 * (analysis/fold.c).
 */
#include "../analysis/analysis.h"

HSCOPE_API void
hscope_tally_options_init(hscope_tally_options *o)
{
    hscope__tally_options_init(o);
}

HSCOPE_API hscope_status
hscope_tally_compute(hscope_tally_t **out, hscope_heap_t *heap, const char *key,
                     const hscope_tally_options *opts, hscope_error *err)
{
    return hscope__tally_compute(out, heap, key, opts, err);
}

HSCOPE_API hscope_status
hscope_tally_subset(hscope_tally_t **out, hscope_heap_t *heap, const char *key,
                    const hscope_id *ids, uint64_t count,
                    const hscope_tally_options *opts, hscope_error *err)
{
    return hscope__tally_subset(out, heap, key, ids, count, opts, err);
}

HSCOPE_API hscope_status
hscope_tally_row_objects(const hscope_tally_t *t, uint64_t i,
                         const hscope_id **ids, uint64_t *count)
{
    return hscope__tally_row_objects(t, i, ids, count);
}

HSCOPE_API void
hscope_tally_free(hscope_tally_t *t)
{
    hscope__tally_free(t);
}

HSCOPE_API uint64_t
hscope_tally_excluded(const hscope_tally_t *t)
{
    return hscope__tally_excluded(t);
}

HSCOPE_API void
hscope_tally_excluded_tracer(const hscope_tally_t *t, uint64_t *objects, uint64_t *memsize)
{
    hscope__tally_tracer(t, objects, memsize);
}

HSCOPE_API hscope_status
hscope_tally_stats(const hscope_tally_t *t, hscope_load_stats *stats)
{
    return hscope__tally_stats(t, stats);
}

HSCOPE_API uint64_t
hscope_tally_skipped(const hscope_tally_t *t, int32_t reason)
{
    return hscope__tally_skipped(t, reason);
}

HSCOPE_API const hscope_fingerprint_t *
hscope_tally_fingerprint(const hscope_tally_t *t)
{
    return hscope__tally_fingerprint(t);
}

HSCOPE_API uint64_t
hscope_tally_row_count(const hscope_tally_t *t)
{
    return hscope__tally_row_count(t);
}

HSCOPE_API uint64_t
hscope_tally_group_count(const hscope_tally_t *t)
{
    return hscope__tally_group_count(t);
}

HSCOPE_API void
hscope_tally_totals(const hscope_tally_t *t, uint64_t *count, uint64_t *memsize)
{
    hscope__tally_totals(t, count, memsize);
}

HSCOPE_API const char *
hscope_tally_row_key(const hscope_tally_t *t, uint64_t i)
{
    return hscope__tally_row_key(t, i);
}

HSCOPE_API uint64_t
hscope_tally_row_count_of(const hscope_tally_t *t, uint64_t i)
{
    return hscope__tally_row_count_of(t, i);
}

HSCOPE_API uint64_t
hscope_tally_row_memsize(const hscope_tally_t *t, uint64_t i)
{
    return hscope__tally_row_memsize(t, i);
}

HSCOPE_API const char *
hscope_tally_by(const hscope_tally_t *t)
{
    return hscope__tally_by(t);
}

HSCOPE_API hscope_status
hscope_tally_file(hscope_tally_t **out, const char *path, const char *key,
                  const hscope_load_options *lo, const hscope_tally_options *uopts,
                  hscope_error *uerr)
{
    return hscope__tally_file(out, path, key, lo, uopts, uerr);
}
