/*
 * access.c - reading a heap: statistics, objects, columns, roots and
 * dangling references.  These are the bodies of the exported
 * hscope_heap_* accessors (api/heap_api.c); the layers above the model
 * call them by their hscope__heap_* names.
 */
#include "model.h"
#include "../index/index.h"

/* ------------------------------------------------------------------ */
/* statistics                                                         */
/* ------------------------------------------------------------------ */

hscope_status
hscope__heap_stats(const hscope_heap_t *h, hscope_load_stats *s)
{
    if (!h || !s || s->size < 2 * sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    hscope__stats_copy_out(s, &h->stats);
    return HSCOPE_OK;
}

uint64_t
hscope__heap_skipped(const hscope_heap_t *h, int32_t reason)
{
    return h && reason >= 0 && reason < HSCOPE_SKIP__COUNT ? h->skipped[reason] : 0;
}

uint64_t
hscope__heap_skipped_line(const hscope_heap_t *h, uint32_t i, int32_t *reason)
{
    if (!h || i >= h->nskip)
        return 0;
    if (reason)
        *reason = h->skip_reason[i];
    return h->skip_line[i];
}

/* ------------------------------------------------------------------ */
/* objects                                                            */
/* ------------------------------------------------------------------ */

#define CHECK_ID(h, id, bad) \
    do {                       \
        if (!(h) || (id) >= (h)->n) \
            return bad;        \
    } while (0)

uint64_t
hscope__heap_object_count(const hscope_heap_t *h)
{
    return h ? h->n : 0;
}

uint64_t
hscope__heap_reference_count(const hscope_heap_t *h)
{
    return h ? h->nedges : 0;
}

const char *
hscope__heap_type_name(const hscope_heap_t *h, int32_t type)
{
    if (!h || type <= 0 || type > 255 || !h->type_names[type][0])
        return "?";
    return h->type_names[type];
}

hscope_status
hscope__heap_find(const hscope_heap_t *h, uint64_t address, hscope_id *out)
{
    if (!h || !out)
        return HSCOPE_ERR_INVALID_ARG;
    *out = hscope__index_find(h, address);
    return *out == HSCOPE_ID_NONE ? HSCOPE_ERR_NOT_FOUND : HSCOPE_OK;
}

uint64_t
hscope__heap_object_address(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return h->addr[id];
}

int32_t
hscope__heap_object_type(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return h->type[id];
}

uint32_t
hscope__heap_object_flags(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return h->flags[id];
}

uint64_t
hscope__heap_object_memsize(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return hscope__memsize(h, id);
}

uint64_t
hscope__heap_object_size(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    uint32_t v = h->size[id];
    return v == HSCOPE__U32_BIG ? hscope__big_get(&h->big_size, id) : v;
}

int64_t
hscope__heap_object_generation(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, -1);
    return h->gen[id] == HSCOPE__GEN_NONE ? -1 : (int64_t)h->gen[id];
}

const char *
hscope__heap_object_file(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, h->site_file[h->site[id]]);
}

uint32_t
hscope__heap_object_line(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return h->site_line[h->site[id]];
}

const char *
hscope__heap_object_method(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, h->site_method[h->site[id]]);
}

const char *
hscope__heap_object_detail(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, h->detail[id]);
}

hscope_id
hscope__heap_object_class(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, HSCOPE_ID_NONE);
    uint32_t c = h->cls[id];
    return c >= HSCOPE__CLS_UNKNOWN ? HSCOPE_ID_NONE : c;
}

uint64_t
hscope__heap_object_class_address(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return hscope__class_addr(h, id);
}

const char *
hscope__heap_object_class_label(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, hscope__label(h, id));
}

const char *
hscope__heap_object_label(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, hscope__object_label(h, id));
}

hscope_status
hscope__heap_object_references(const hscope_heap_t *h, hscope_id id,
                               const hscope_id **targets, uint64_t *count)
{
    if (!h || !targets || !count)
        return HSCOPE_ERR_INVALID_ARG;
    if (id >= h->n)
        return HSCOPE_ERR_NOT_FOUND;
    *targets = h->edges + h->edge_start[id];
    *count = h->edge_start[id + 1] - h->edge_start[id];
    return HSCOPE_OK;
}

hscope_status
hscope__heap_object_referrers(hscope_heap_t *h, hscope_id id,
                              const hscope_id **sources, uint64_t *count,
                              hscope_error *uerr)
{
    if (!h || !sources || !count)
        return HSCOPE_ERR_INVALID_ARG;
    if (id >= h->n)
        return HSCOPE_ERR_NOT_FOUND;
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = hscope__reverse_build(h, &err);
    if (st != HSCOPE_OK) {
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    *sources = h->rev_src + h->rev_start[id];
    *count = h->rev_start[id + 1] - h->rev_start[id];
    return HSCOPE_OK;
}

hscope_status
hscope__heap_object_value(const hscope_heap_t *h, hscope_id id,
                          const char **data, uint64_t *len)
{
    if (!h || !data || !len)
        return HSCOPE_ERR_INVALID_ARG;
    size_t lo = 0, hi = h->nval;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->val_id[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= h->nval || h->val_id[lo] != id)
        return HSCOPE_ERR_NOT_FOUND;
    *data = h->val_arena + h->val_off[lo];
    *len = h->val_len[lo];
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* bulk columns                                                       */
/* ------------------------------------------------------------------ */

hscope_status
hscope__heap_column(const hscope_heap_t *h, int32_t column, const void **data,
                    uint64_t *length, int32_t *elem)
{
    if (!h || !data || !length || !elem)
        return HSCOPE_ERR_INVALID_ARG;
    uint64_t n = h->n;
    switch (column) {
    case HSCOPE_COL_ADDRESS: *data = h->addr; *elem = HSCOPE_ELEM_U64; break;
    case HSCOPE_COL_TYPE: *data = h->type; *elem = HSCOPE_ELEM_U8; break;
    case HSCOPE_COL_FLAGS: *data = h->flags; *elem = HSCOPE_ELEM_U16; break;
    case HSCOPE_COL_CLASS: *data = h->cls; *elem = HSCOPE_ELEM_U32; break;
    case HSCOPE_COL_MEMSIZE: *data = h->memsize; *elem = HSCOPE_ELEM_U32; break;
    case HSCOPE_COL_SIZE: *data = h->size; *elem = HSCOPE_ELEM_U32; break;
    case HSCOPE_COL_GENERATION: *data = h->gen; *elem = HSCOPE_ELEM_U32; break;
    case HSCOPE_COL_SITE: *data = h->site; *elem = HSCOPE_ELEM_U32; break;
    case HSCOPE_COL_DETAIL: *data = h->detail; *elem = HSCOPE_ELEM_U32; break;
    case HSCOPE_COL_REF_START:
        *data = h->edge_start;
        *elem = HSCOPE_ELEM_U32;
        n = (uint64_t)h->n + 1;
        break;
    case HSCOPE_COL_REFS:
        *data = h->edges;
        *elem = HSCOPE_ELEM_U32;
        n = h->nedges;
        break;
    default:
        return HSCOPE_ERR_UNSUPPORTED;
    }
    *length = n;
    return HSCOPE_OK;
}

const char *
hscope__heap_string(const hscope_heap_t *h, uint32_t id)
{
    return h ? hscope__intern_str(&h->strings, id) : NULL;
}

hscope_status
hscope__heap_site(const hscope_heap_t *h, uint32_t site, uint32_t *file,
                  uint32_t *line, uint32_t *method)
{
    if (!h)
        return HSCOPE_ERR_INVALID_ARG;
    if (site >= h->nsites)
        return HSCOPE_ERR_NOT_FOUND;
    if (file)
        *file = h->site_file[site];
    if (line)
        *line = h->site_line[site];
    if (method)
        *method = h->site_method[site];
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* roots and dangling references                                      */
/* ------------------------------------------------------------------ */

uint32_t
hscope__heap_root_category_count(const hscope_heap_t *h)
{
    return h ? h->ncat : 0;
}

const char *
hscope__heap_root_category_name(const hscope_heap_t *h, uint32_t i)
{
    return h && i < h->ncat ? hscope__intern_str(&h->strings, h->cat_name[i]) : NULL;
}

uint64_t
hscope__heap_root_category_records(const hscope_heap_t *h, uint32_t i)
{
    return h && i < h->ncat ? h->cat_records[i] : 0;
}

hscope_status
hscope__heap_root_targets(const hscope_heap_t *h, uint32_t i,
                          const hscope_id **targets, uint64_t *count,
                          uint64_t *dangling)
{
    if (!h || !targets || !count)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= h->ncat)
        return HSCOPE_ERR_NOT_FOUND;
    *targets = h->root_targets + h->cat_start[i];
    *count = h->cat_start[i + 1] - h->cat_start[i];
    if (dangling)
        *dangling = h->cat_dangling[i + 1] - h->cat_dangling[i];
    return HSCOPE_OK;
}

hscope_status
hscope__heap_root_dangling(const hscope_heap_t *h, uint32_t i,
                           const uint64_t **addresses, uint64_t *count)
{
    if (!h || !addresses || !count)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= h->ncat)
        return HSCOPE_ERR_NOT_FOUND;
    *addresses = h->root_dang + h->cat_dangling[i];
    *count = h->cat_dangling[i + 1] - h->cat_dangling[i];
    return HSCOPE_OK;
}

uint64_t
hscope__heap_dangling_count(const hscope_heap_t *h)
{
    return h ? h->ndang : 0;
}

hscope_status
hscope__heap_dangling(const hscope_heap_t *h, uint64_t i, hscope_id *from,
                      uint64_t *address)
{
    if (!h)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= h->ndang)
        return HSCOPE_ERR_NOT_FOUND;
    if (from)
        *from = h->dang_from[i];
    if (address)
        *address = h->dang_addr[i];
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* Ruby 4.0 and later; fields this version does not know               */
/* ------------------------------------------------------------------ */

int32_t
hscope__heap_object_oid(const hscope_heap_t *h, hscope_id id, uint64_t *object_id)
{
    CHECK_ID(h, id, 0);
    uint64_t v;
    if (!hscope__oid(h, id, &v))
        return 0;
    if (object_id)
        *object_id = v;
    return 1;
}

hscope_id
hscope__heap_object_owner(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, HSCOPE_ID_NONE);
    return hscope__fields_owner(h, id, hscope__fields_str(h));
}

int32_t
hscope__heap_root_category_conservative(const hscope_heap_t *h, uint32_t i)
{
    return h && hscope__cat_conservative(h, i);
}

uint32_t
hscope__heap_unknown_count(const hscope_heap_t *h)
{
    return h && h->unknown ? h->unknown->n + (h->unknown->other != 0) : 0;
}

hscope_status
hscope__heap_unknown_get(const hscope_heap_t *h, uint32_t i, int32_t *kind,
                        const char **name, uint64_t *count)
{
    if (!h)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= hscope__heap_unknown_count(h))
        return HSCOPE_ERR_NOT_FOUND;
    const hscope__unknown *e = i < h->unknown->n ? &h->unknown->e[i] : NULL;
    if (kind)
        *kind = e ? e->kind : HSCOPE_UNKNOWN_OTHER;
    if (name)
        *name = e ? e->name : "(other)";
    if (count)
        *count = e ? e->count : h->unknown->other;
    return HSCOPE_OK;
}
