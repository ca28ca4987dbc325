/*
 * heap_api.c - public entry points for loading a heap and reading it: the
 * exported names of model/load.c and model/access.c.
 */
#include "../model/model.h"

HSCOPE_API hscope_status
hscope_heap_open_saved(hscope_heap_t **out, const char *path, const char *source,
                       const hscope_load_options *uopts, hscope_error *uerr)
{
    return hscope__heap_open_saved(out, path, source, uopts, uerr);
}

HSCOPE_API hscope_status
hscope_heap_open_file(hscope_heap_t **out, const char *path,
                      const hscope_load_options *opts, hscope_error *err)
{
    return hscope__heap_open_file(out, path, opts, err);
}

HSCOPE_API hscope_status
hscope_heap_open_fd(hscope_heap_t **out, int fd, const hscope_load_options *opts,
                    hscope_error *err)
{
    return hscope__heap_open_fd(out, fd, opts, err);
}

HSCOPE_API hscope_status
hscope_heap_open_memory(hscope_heap_t **out, const void *data, size_t len,
                        const hscope_load_options *opts, hscope_error *err)
{
    return hscope__heap_open_memory(out, data, len, opts, err);
}

HSCOPE_API hscope_heap_t *
hscope_heap_ref(hscope_heap_t *h)
{
    return hscope__heap_ref(h);
}

HSCOPE_API void
hscope_heap_free(hscope_heap_t *h)
{
    hscope__heap_release(h);
}

HSCOPE_API hscope_status
hscope_heap_stats(const hscope_heap_t *h, hscope_load_stats *s)
{
    return hscope__heap_stats(h, s);
}

HSCOPE_API uint64_t
hscope_heap_skipped(const hscope_heap_t *h, int32_t reason)
{
    return hscope__heap_skipped(h, reason);
}

HSCOPE_API uint64_t
hscope_heap_skipped_line(const hscope_heap_t *h, uint32_t i, int32_t *reason)
{
    return hscope__heap_skipped_line(h, i, reason);
}

HSCOPE_API uint64_t
hscope_heap_object_count(const hscope_heap_t *h)
{
    return hscope__heap_object_count(h);
}

HSCOPE_API uint64_t
hscope_heap_reference_count(const hscope_heap_t *h)
{
    return hscope__heap_reference_count(h);
}

HSCOPE_API const char *
hscope_heap_type_name(const hscope_heap_t *h, int32_t type)
{
    return hscope__heap_type_name(h, type);
}

HSCOPE_API hscope_status
hscope_heap_find(const hscope_heap_t *h, uint64_t address, hscope_id *out)
{
    return hscope__heap_find(h, address, out);
}

HSCOPE_API uint64_t
hscope_heap_object_address(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_address(h, id);
}

HSCOPE_API int32_t
hscope_heap_object_type(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_type(h, id);
}

HSCOPE_API uint32_t
hscope_heap_object_flags(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_flags(h, id);
}

HSCOPE_API uint64_t
hscope_heap_object_memsize(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_memsize(h, id);
}

HSCOPE_API uint64_t
hscope_heap_object_size(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_size(h, id);
}

HSCOPE_API int64_t
hscope_heap_object_generation(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_generation(h, id);
}

HSCOPE_API const char *
hscope_heap_object_file(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_file(h, id);
}

HSCOPE_API uint32_t
hscope_heap_object_line(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_line(h, id);
}

HSCOPE_API const char *
hscope_heap_object_method(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_method(h, id);
}

HSCOPE_API const char *
hscope_heap_object_detail(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_detail(h, id);
}

HSCOPE_API hscope_id
hscope_heap_object_class(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_class(h, id);
}

HSCOPE_API uint64_t
hscope_heap_object_class_address(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_class_address(h, id);
}

HSCOPE_API const char *
hscope_heap_object_class_label(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_class_label(h, id);
}

HSCOPE_API const char *
hscope_heap_object_label(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_label(h, id);
}

HSCOPE_API hscope_status
hscope_heap_object_references(const hscope_heap_t *h, hscope_id id,
                              const hscope_id **targets, uint64_t *count)
{
    return hscope__heap_object_references(h, id, targets, count);
}

HSCOPE_API hscope_status
hscope_heap_object_referrers(hscope_heap_t *h, hscope_id id,
                             const hscope_id **sources, uint64_t *count,
                             hscope_error *uerr)
{
    return hscope__heap_object_referrers(h, id, sources, count, uerr);
}

HSCOPE_API hscope_status
hscope_heap_object_value(const hscope_heap_t *h, hscope_id id,
                         const char **data, uint64_t *len)
{
    return hscope__heap_object_value(h, id, data, len);
}

HSCOPE_API hscope_status
hscope_heap_column(const hscope_heap_t *h, int32_t column, const void **data,
                   uint64_t *length, int32_t *elem)
{
    return hscope__heap_column(h, column, data, length, elem);
}

HSCOPE_API const char *
hscope_heap_string(const hscope_heap_t *h, uint32_t id)
{
    return hscope__heap_string(h, id);
}

HSCOPE_API hscope_status
hscope_heap_site(const hscope_heap_t *h, uint32_t site, uint32_t *file,
                 uint32_t *line, uint32_t *method)
{
    return hscope__heap_site(h, site, file, line, method);
}

HSCOPE_API uint32_t
hscope_heap_root_category_count(const hscope_heap_t *h)
{
    return hscope__heap_root_category_count(h);
}

HSCOPE_API const char *
hscope_heap_root_category_name(const hscope_heap_t *h, uint32_t i)
{
    return hscope__heap_root_category_name(h, i);
}

HSCOPE_API uint64_t
hscope_heap_root_category_records(const hscope_heap_t *h, uint32_t i)
{
    return hscope__heap_root_category_records(h, i);
}

HSCOPE_API hscope_status
hscope_heap_root_targets(const hscope_heap_t *h, uint32_t i,
                         const hscope_id **targets, uint64_t *count,
                         uint64_t *dangling)
{
    return hscope__heap_root_targets(h, i, targets, count, dangling);
}

HSCOPE_API hscope_status
hscope_heap_root_dangling(const hscope_heap_t *h, uint32_t i,
                          const uint64_t **addresses, uint64_t *count)
{
    return hscope__heap_root_dangling(h, i, addresses, count);
}

HSCOPE_API uint64_t
hscope_heap_dangling_count(const hscope_heap_t *h)
{
    return hscope__heap_dangling_count(h);
}

HSCOPE_API hscope_status
hscope_heap_dangling(const hscope_heap_t *h, uint64_t i, hscope_id *from,
                     uint64_t *address)
{
    return hscope__heap_dangling(h, i, from, address);
}

HSCOPE_API hscope_status
hscope_heap_save(const hscope_heap_t *h, const char *path, const char *source,
                 hscope_error *uerr)
{
    return hscope__heap_save(h, path, source, uerr);
}

/* ------------------------------------------------------------------ */
/* Ruby 4.0 and later; fields this version does not know               */
/* ------------------------------------------------------------------ */

HSCOPE_API int32_t
hscope_heap_object_oid(const hscope_heap_t *h, hscope_id id, uint64_t *object_id)
{
    return hscope__heap_object_oid(h, id, object_id);
}

HSCOPE_API hscope_id
hscope_heap_object_owner(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_object_owner(h, id);
}

HSCOPE_API int32_t
hscope_heap_root_category_conservative(const hscope_heap_t *h, uint32_t i)
{
    return hscope__heap_root_category_conservative(h, i);
}

HSCOPE_API uint32_t
hscope_heap_unknown_count(const hscope_heap_t *h)
{
    return hscope__heap_unknown_count(h);
}

HSCOPE_API hscope_status
hscope_heap_unknown_get(const hscope_heap_t *h, uint32_t i, int32_t *kind,
                        const char **name, uint64_t *count)
{
    return hscope__heap_unknown_get(h, i, kind, name, count);
}
