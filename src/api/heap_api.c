/*
 * heap_api.c - public entry points for loading a heap and reading it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/model.h"
#include "../parse/parse.h"

/* ------------------------------------------------------------------ */
/* loading                                                            */
/* ------------------------------------------------------------------ */

enum src_kind { SRC_PATH, SRC_FD, SRC_MEM };

static hscope_status
load(hscope_heap_t **out, enum src_kind kind, const char *path, int fd,
     const void *data, size_t len, const hscope_load_options *uopts,
     hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options o;
    hscope_status st;
    hscope__mem tmpmem;
    hscope__reader r;
    hscope__builder b;
    hscope_heap_t *h = NULL;
    uint64_t t0 = hscope__now_ns();
    int have_reader = 0, have_builder = 0;

    memset(&b, 0, sizeof(b));
    if (!out) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out is NULL");
        goto done;
    }
    *out = NULL;
    if ((st = hscope__read_load_options(uopts, &o, &err)) != HSCOPE_OK)
        goto done;
    hscope__mem_init(&tmpmem, o.allocator, o.max_memory);
    h = hscope__calloc(&tmpmem, 1, sizeof(*h));
    if (!h) {
        st = hscope__nomem(&err, sizeof(*h));
        goto done;
    }
    /* The heap's own context starts with the same hooks; it accounts for
     * everything from here on (including the struct itself). */
    hscope__mem_init(&h->mem, o.allocator, o.max_memory);
    atomic_store(&h->mem.used, atomic_load(&tmpmem.used));
    atomic_init(&h->refs, 1);
    pthread_mutex_init(&h->rev_lock, NULL);
    int no_gzip = (o.flags & HSCOPE_LOAD_NO_GZIP) != 0;
    if (kind == SRC_PATH)
        st = hscope__reader_open_path(&r, &h->mem, path, no_gzip, &err);
    else if (kind == SRC_FD)
        st = hscope__reader_open_fd(&r, &h->mem, fd, no_gzip, &err);
    else
        st = hscope__reader_open_memory(&r, &h->mem, data, len, no_gzip, &err);
    have_reader = 1;
    if (st != HSCOPE_OK)
        goto done;
    have_builder = 1;
    if ((st = hscope__builder_init(&b, &h->mem, (o.flags & HSCOPE_LOAD_VALUES) != 0,
                                   o.max_objects, &err)) != HSCOPE_OK)
        goto done;
    hscope__parse_opts po = {
        .strict = (o.flags & HSCOPE_LOAD_STRICT) != 0,
        .max_line = o.max_line_bytes,
        .max_refs = o.max_references,
        .progress = o.progress,
        .progress_ud = o.progress_user_data,
        .line_fn = o.line_fn,
        .line_ud = o.line_user_data,
    };
    unsigned threads = hscope__parse_threads(o.threads, &r);
    if (threads > 1 && !po.line_fn)
        st = hscope__parse_parallel(&r, &b, &po, threads, &err);
    else
        st = hscope__parse_stream(&r, &b, &po, &err);
    if (st != HSCOPE_OK)
        goto done;
    if (b.n == 0 && b.root_records == 0 && b.shapes == 0 && b.free_slots == 0) {
        st = hscope__fail(&err, HSCOPE_ERR_NOT_A_DUMP,
                          b.lines ? "not a heap dump: none of %llu lines is a "
                                    "heap dump record (first problem: line %llu, %s)"
                                  : "not a heap dump: the input is empty",
                          (unsigned long long)b.lines,
                          (unsigned long long)(b.nskip_examples ? b.skip_line[0] : 0),
                          b.nskip_examples ? hscope__skip_reason_name(b.skip_reason[0]) : "");
        goto done;
    }
    if ((st = hscope__model_build(h, &b, threads, &err)) != HSCOPE_OK)
        goto done;
    h->stats.gzip = (uint32_t)r.gzip;
    h->stats.input_bytes = r.in_bytes;
    h->stats.load_ns = hscope__now_ns() - t0;
done:
    if (have_builder)
        hscope__builder_free(&b);
    if (have_reader)
        hscope__reader_close(&r);
    if (st != HSCOPE_OK) {
        if (h) {
            hscope__model_free(h);
            pthread_mutex_destroy(&h->rev_lock);
            hscope__mem m = h->mem;
            hscope__free(&m, h);
        }
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    h->stats.index_bytes = hscope__index_bytes(h);
    h->stats.model_bytes = atomic_load(&h->mem.used) - h->stats.index_bytes;
    *out = h;
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_heap_open_saved(hscope_heap_t **out, const char *path, const char *source,
                       const hscope_load_options *uopts, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options o;
    hscope_status st;
    hscope_heap_t *h = NULL;
    uint64_t t0 = hscope__now_ns();
    if (!out || !path) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out and path are required");
        goto done;
    }
    *out = NULL;
    if ((st = hscope__read_load_options(uopts, &o, &err)) != HSCOPE_OK)
        goto done;
    hscope__mem tmpmem;
    hscope__mem_init(&tmpmem, o.allocator, o.max_memory);
    h = hscope__calloc(&tmpmem, 1, sizeof(*h));
    if (!h) {
        st = hscope__nomem(&err, sizeof(*h));
        goto done;
    }
    hscope__mem_init(&h->mem, o.allocator, o.max_memory);
    atomic_store(&h->mem.used, atomic_load(&tmpmem.used));
    atomic_init(&h->refs, 1);
    pthread_mutex_init(&h->rev_lock, NULL);
    if ((st = hscope__model_open_saved(h, path, source, &err)) != HSCOPE_OK)
        goto done;
    h->stats.from_index = 1;
    h->stats.load_ns = hscope__now_ns() - t0;
done:
    if (st != HSCOPE_OK) {
        if (h) {
            hscope__model_free(h);
            pthread_mutex_destroy(&h->rev_lock);
            hscope__mem m = h->mem;
            hscope__free(&m, h);
        }
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    *out = h;
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_heap_open_file(hscope_heap_t **out, const char *path,
                      const hscope_load_options *opts, hscope_error *err)
{
    if (opts && opts->size >= offsetof(hscope_load_options, flags) + 4 &&
        (opts->flags & HSCOPE_LOAD_USE_INDEX) && path) {
        /* a fresh, intact PATH.hsx; anything else: parse the dump */
        size_t n = strlen(path);
        char *ix = malloc(n + 5);
        if (ix) {
            memcpy(ix, path, n);
            memcpy(ix + n, ".hsx", 5);
            hscope_status st = access(ix, R_OK) == 0
                                   ? hscope_heap_open_saved(out, ix, path, opts, NULL)
                                   : HSCOPE_ERR_NOT_FOUND;
            free(ix);
            if (st == HSCOPE_OK)
                return st;
        }
    }
    return load(out, SRC_PATH, path, -1, NULL, 0, opts, err);
}

HSCOPE_API hscope_status
hscope_heap_open_fd(hscope_heap_t **out, int fd, const hscope_load_options *opts,
                    hscope_error *err)
{
    return load(out, SRC_FD, NULL, fd, NULL, 0, opts, err);
}

HSCOPE_API hscope_status
hscope_heap_open_memory(hscope_heap_t **out, const void *data, size_t len,
                        const hscope_load_options *opts, hscope_error *err)
{
    return load(out, SRC_MEM, NULL, -1, data, len, opts, err);
}

void
hscope__heap_retain(hscope_heap_t *h)
{
    atomic_fetch_add(&h->refs, 1);
}

void
hscope__heap_release(hscope_heap_t *h)
{
    if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
        return;
    hscope__model_free(h);
    pthread_mutex_destroy(&h->rev_lock);
    hscope__mem m = h->mem;
    hscope__free(&m, h);
}

HSCOPE_API hscope_heap_t *
hscope_heap_ref(hscope_heap_t *h)
{
    if (h)
        hscope__heap_retain(h);
    return h;
}

HSCOPE_API void
hscope_heap_free(hscope_heap_t *h)
{
    hscope__heap_release(h);
}

/* ------------------------------------------------------------------ */
/* statistics                                                         */
/* ------------------------------------------------------------------ */

HSCOPE_API hscope_status
hscope_heap_stats(const hscope_heap_t *h, hscope_load_stats *s)
{
    if (!h || !s || s->size < 2 * sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    hscope__stats_copy_out(s, &h->stats);
    return HSCOPE_OK;
}

HSCOPE_API uint64_t
hscope_heap_skipped(const hscope_heap_t *h, int32_t reason)
{
    return h && reason >= 0 && reason < HSCOPE_SKIP__COUNT ? h->skipped[reason] : 0;
}

HSCOPE_API uint64_t
hscope_heap_skipped_line(const hscope_heap_t *h, uint32_t i, int32_t *reason)
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

HSCOPE_API uint64_t
hscope_heap_object_count(const hscope_heap_t *h)
{
    return h ? h->n : 0;
}

HSCOPE_API uint64_t
hscope_heap_reference_count(const hscope_heap_t *h)
{
    return h ? h->nedges : 0;
}

HSCOPE_API const char *
hscope_heap_type_name(const hscope_heap_t *h, int32_t type)
{
    if (!h || type <= 0 || type > 255 || !h->type_names[type][0])
        return "?";
    return h->type_names[type];
}

HSCOPE_API hscope_status
hscope_heap_find(const hscope_heap_t *h, uint64_t address, hscope_id *out)
{
    if (!h || !out)
        return HSCOPE_ERR_INVALID_ARG;
    *out = hscope__index_find(h, address);
    return *out == HSCOPE_ID_NONE ? HSCOPE_ERR_NOT_FOUND : HSCOPE_OK;
}

HSCOPE_API uint64_t
hscope_heap_object_address(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return h->addr[id];
}

HSCOPE_API int32_t
hscope_heap_object_type(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return h->type[id];
}

HSCOPE_API uint32_t
hscope_heap_object_flags(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return h->flags[id];
}

HSCOPE_API uint64_t
hscope_heap_object_memsize(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return hscope__memsize(h, id);
}

HSCOPE_API uint64_t
hscope_heap_object_size(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    uint32_t v = h->size[id];
    return v == HSCOPE__U32_BIG ? hscope__big_get(&h->big_size, id) : v;
}

HSCOPE_API int64_t
hscope_heap_object_generation(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, -1);
    return h->gen[id] == HSCOPE__GEN_NONE ? -1 : (int64_t)h->gen[id];
}

HSCOPE_API const char *
hscope_heap_object_file(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, h->site_file[h->site[id]]);
}

HSCOPE_API uint32_t
hscope_heap_object_line(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    return h->site_line[h->site[id]];
}

HSCOPE_API const char *
hscope_heap_object_method(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, h->site_method[h->site[id]]);
}

HSCOPE_API const char *
hscope_heap_object_detail(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, h->detail[id]);
}

HSCOPE_API hscope_id
hscope_heap_object_class(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, HSCOPE_ID_NONE);
    uint32_t c = h->cls[id];
    return c >= HSCOPE__CLS_UNKNOWN ? HSCOPE_ID_NONE : c;
}

HSCOPE_API uint64_t
hscope_heap_object_class_address(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, 0);
    uint32_t c = h->cls[id];
    if (c == HSCOPE__CLS_HIDDEN)
        return 0;
    if (c != HSCOPE__CLS_UNKNOWN)
        return h->addr[c];
    size_t lo = 0, hi = h->nucls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->ucls_id[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->nucls && h->ucls_id[lo] == id ? h->ucls_addr[lo] : 0;
}

HSCOPE_API const char *
hscope_heap_object_class_label(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, hscope__label(h, id));
}

HSCOPE_API const char *
hscope_heap_object_label(const hscope_heap_t *h, hscope_id id)
{
    CHECK_ID(h, id, NULL);
    return hscope__intern_str(&h->strings, hscope__object_label(h, id));
}

HSCOPE_API hscope_status
hscope_heap_object_references(const hscope_heap_t *h, hscope_id id,
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

HSCOPE_API hscope_status
hscope_heap_object_referrers(hscope_heap_t *h, hscope_id id,
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

HSCOPE_API hscope_status
hscope_heap_object_value(const hscope_heap_t *h, hscope_id id,
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

HSCOPE_API hscope_status
hscope_heap_column(const hscope_heap_t *h, int32_t column, const void **data,
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

HSCOPE_API const char *
hscope_heap_string(const hscope_heap_t *h, uint32_t id)
{
    return h ? hscope__intern_str(&h->strings, id) : NULL;
}

HSCOPE_API hscope_status
hscope_heap_site(const hscope_heap_t *h, uint32_t site, uint32_t *file,
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

HSCOPE_API uint32_t
hscope_heap_root_category_count(const hscope_heap_t *h)
{
    return h ? h->ncat : 0;
}

HSCOPE_API const char *
hscope_heap_root_category_name(const hscope_heap_t *h, uint32_t i)
{
    return h && i < h->ncat ? hscope__intern_str(&h->strings, h->cat_name[i]) : NULL;
}

HSCOPE_API uint64_t
hscope_heap_root_category_records(const hscope_heap_t *h, uint32_t i)
{
    return h && i < h->ncat ? h->cat_records[i] : 0;
}

HSCOPE_API hscope_status
hscope_heap_root_targets(const hscope_heap_t *h, uint32_t i,
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

HSCOPE_API hscope_status
hscope_heap_root_dangling(const hscope_heap_t *h, uint32_t i,
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

HSCOPE_API uint64_t
hscope_heap_dangling_count(const hscope_heap_t *h)
{
    return h ? h->ndang : 0;
}

HSCOPE_API hscope_status
hscope_heap_dangling(const hscope_heap_t *h, uint64_t i, hscope_id *from,
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
