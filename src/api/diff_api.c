/*
 * diff_api.c - the exported diff functions (analysis/diff.c): the diff of
 * loaded heaps, of files (the last dump loaded, the others streamed), its
 * accessors.
 */
#include "../model/model.h"
#include "../analysis/diff.h"

HSCOPE_API hscope_status
hscope_diff_files(hscope_diff_t **out, const char *path_a, const char *path_b,
                  const char *path_c, const hscope_load_options *load,
                  const hscope_diff_options *opts, hscope_error *uerr)
{
    return hscope__diff_files(out, path_a, path_b, path_c, load, opts, uerr);
}

HSCOPE_API void
hscope_diff_options_init(hscope_diff_options *o)
{
    hscope__diff_options_init(o);
}

HSCOPE_API hscope_status
hscope_diff_compute(hscope_diff_t **out, hscope_heap_t *a, hscope_heap_t *b,
                    hscope_heap_t *c, const hscope_diff_options *opts,
                    hscope_error *uerr)
{
    return hscope__diff_compute(out, a, b, c, opts, uerr);
}

HSCOPE_API void
hscope_diff_free(hscope_diff_t *d)
{
    hscope__diff_free(d);
}

HSCOPE_API hscope_heap_t *
hscope_diff_heap(const hscope_diff_t *d)
{
    return hscope__diff_heap(d);
}

HSCOPE_API uint64_t
hscope_diff_count(const hscope_diff_t *d)
{
    return hscope__diff_count(d);
}

HSCOPE_API uint64_t
hscope_diff_memsize(const hscope_diff_t *d)
{
    return hscope__diff_memsize(d);
}

HSCOPE_API const hscope_id *
hscope_diff_objects(const hscope_diff_t *d)
{
    return hscope__diff_objects(d);
}

HSCOPE_API uint64_t
hscope_diff_excluded(const hscope_diff_t *d)
{
    return hscope__diff_excluded(d);
}

HSCOPE_API void
hscope_diff_excluded_tracer(const hscope_diff_t *d, uint64_t *objects, uint64_t *memsize)
{
    hscope__diff_tracer(d, objects, memsize);
}

HSCOPE_API uint64_t
hscope_diff_snapshot_objects(const hscope_diff_t *d, uint32_t i)
{
    return hscope__diff_snapshot_objects(d, i);
}

HSCOPE_API uint64_t
hscope_diff_reused_addresses(const hscope_diff_t *d)
{
    return hscope__diff_reused_addresses(d);
}

HSCOPE_API uint32_t
hscope_diff_warnings(const hscope_diff_t *d)
{
    return hscope__diff_warnings(d);
}

HSCOPE_API const char *
hscope_diff_warning_text(const hscope_diff_t *d)
{
    return hscope__diff_warning_text(d);
}

HSCOPE_API uint64_t
hscope_diff_object_id_matches(const hscope_diff_t *d)
{
    return hscope__diff_object_id_matches(d);
}

HSCOPE_API uint64_t
hscope_diff_moved_objects(const hscope_diff_t *d)
{
    return hscope__diff_moved_objects(d);
}

HSCOPE_API const char *
hscope_diff_note_text(const hscope_diff_t *d)
{
    return hscope__diff_note_text(d);
}

HSCOPE_API hscope_status
hscope_diff_tally(hscope_tally_t **out, const hscope_diff_t *d, const char *key,
                  const hscope_tally_options *opts, hscope_error *err)
{
    return hscope__diff_tally(out, d, key, opts, err);
}
