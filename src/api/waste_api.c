/*
 * waste_api.c - the exported functions of the waste analysis: argument
 * and option checks, accessors with size-checked copy-out, the writer's
 * entry point, errors copied out.
 */
#include <string.h>

#include "../model/model.h"
#include "../analysis/waste.h"
#include "../report/out.h"
#include "../report/writers.h"

HSCOPE_API void
hscope_waste_options_init(hscope_waste_options *opts)
{
    hscope__waste_options_init(opts);
}

HSCOPE_API void
hscope_waste_totals_init(hscope_waste_totals *totals)
{
    hscope__waste_totals_init(totals);
}

HSCOPE_API hscope_status
hscope_waste_file(hscope_waste_t **out, const char *path, const hscope_load_options *load,
                  const hscope_waste_options *opts, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options lo;
    hscope__wcfg cfg;
    hscope_status st;
    if (out)
        *out = NULL;
    if (!out || !path)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "NULL argument");
    else if ((st = hscope__read_load_options(load, &lo, &err)) == HSCOPE_OK &&
             (st = hscope__wcfg_read(opts, &cfg, &err)) == HSCOPE_OK)
        st = hscope__waste_file(out, path, &lo, &cfg, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API hscope_status
hscope_waste_compute(hscope_waste_t **out, const hscope_heap_t *heap,
                     const hscope_waste_options *opts, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope__wcfg cfg;
    hscope_status st;
    if (out)
        *out = NULL;
    if (!out || !heap)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "NULL argument");
    else if ((st = hscope__wcfg_read(opts, &cfg, &err)) == HSCOPE_OK)
        st = hscope__waste_heap(out, heap, &cfg, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API void
hscope_waste_free(hscope_waste_t *w)
{
    hscope__waste_free(w);
}

/* Copy a full-size result struct into a caller's of `size` bytes (at
 * least its two leading 32-bit words), keeping the caller's size. */
static hscope_status
copy_out(void *dst, const void *src, size_t full)
{
    uint32_t size;
    if (!dst)
        return HSCOPE_ERR_INVALID_ARG;
    memcpy(&size, dst, sizeof(size));
    if (size < 2 * sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    memcpy(dst, src, size < full ? size : full);
    memcpy(dst, &size, sizeof(size));
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_waste_totals_get(const hscope_waste_t *w, hscope_waste_totals *totals)
{
    if (!w)
        return HSCOPE_ERR_INVALID_ARG;
    return copy_out(totals, &w->tot, sizeof(w->tot));
}

HSCOPE_API void
hscope_waste_excluded_tracer(const hscope_waste_t *w, uint64_t *objects, uint64_t *memsize)
{
    if (objects)
        *objects = w ? w->tracer : 0;
    if (memsize)
        *memsize = w ? w->tracer_mem : 0;
}

HSCOPE_API uint64_t
hscope_waste_row_count(const hscope_waste_t *w)
{
    return w ? w->nrows : 0;
}

HSCOPE_API hscope_status
hscope_waste_row_get(const hscope_waste_t *w, uint64_t i, hscope_waste_row *row)
{
    if (!w || !row)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= w->nrows)
        return HSCOPE_ERR_NOT_FOUND;
    const hscope__wrow *r = &w->rows[i];
    hscope_waste_row full = {
        .size = sizeof(full), .kind = r->kind, .type = r->type,
        .key = hscope__intern_str(&w->keys, r->key),
        .fix = hscope__intern_str(&w->fixes, r->fix), .fix_kind = r->fix_kind,
        .chilled = r->chilled,
        .count = r->count, .saving = r->saving, .memsize = r->memsize,
        .copies = r->copies, .frozen = r->frozen, .fstring = r->fstring,
        .values = r->values, .buffer = r->buffer, .used = r->used,
    };
    return copy_out(row, &full, sizeof(full));
}

HSCOPE_API hscope_status
hscope_waste_row_value(const hscope_waste_t *w, uint64_t i, uint64_t j, uint64_t *value,
                       uint64_t *copies, uint64_t *saving)
{
    if (!w)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= w->nrows || j >= w->rows[i].values || w->rows[i].kind != HSCOPE_WASTE_DUPLICATE)
        return HSCOPE_ERR_NOT_FOUND;
    const hscope__wref *r = &w->vrefs[w->rows[i].vfirst + j];
    if (value)
        *value = r->idx;
    if (copies)
        *copies = r->copies;
    if (saving)
        *saving = r->saving;
    return HSCOPE_OK;
}

HSCOPE_API uint64_t
hscope_waste_value_count(const hscope_waste_t *w)
{
    return w ? w->nvals : 0;
}

HSCOPE_API hscope_status
hscope_waste_value_get(const hscope_waste_t *w, uint64_t i, hscope_waste_value *value)
{
    if (!w || !value)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= w->nvals)
        return HSCOPE_ERR_NOT_FOUND;
    const hscope__wval *v = &w->vals[i];
    hscope_waste_value full = {
        .size = sizeof(full), .hash = v->hash, .length = v->length,
        .data = v->redacted ? NULL : w->varena + v->data, .copies = v->copies, .memsize = v->memsize,
        .saving = v->saving, .frozen = v->frozen, .fstring = v->fstring, .sites = v->nsites,
    };
    return copy_out(value, &full, sizeof(full));
}

HSCOPE_API hscope_status
hscope_waste_value_site(const hscope_waste_t *w, uint64_t i, uint64_t j, const char **key,
                        uint64_t *copies, uint64_t *saving)
{
    if (!w)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= w->nvals || j >= w->vals[i].nsites)
        return HSCOPE_ERR_NOT_FOUND;
    const hscope__wref *r = &w->srefs[w->vals[i].sfirst + j];
    if (key)
        *key = hscope__intern_str(&w->keys, (uint32_t)r->idx);
    if (copies)
        *copies = r->copies;
    if (saving)
        *saving = r->saving;
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_waste_stats(const hscope_waste_t *w, hscope_load_stats *stats)
{
    if (!w || !stats || stats->size < 8)
        return HSCOPE_ERR_INVALID_ARG;
    hscope__stats_copy_out(stats, &w->stats);
    return HSCOPE_OK;
}

HSCOPE_API uint64_t
hscope_waste_skipped(const hscope_waste_t *w, int32_t reason)
{
    if (!w || reason < 0 || reason >= HSCOPE_SKIP__COUNT)
        return 0;
    return w->skipped[reason];
}

HSCOPE_API hscope_status
hscope_waste_write(const hscope_waste_t *w, const hscope_report_options *opts,
                   hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope__ropts ro;
    hscope__out o;
    hscope_status st;
    hscope__out_init(&o, write, user_data, &err);
    if (!w || !write)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG,
                          "the waste analysis and the write function are required");
    else if ((st = hscope__ropts_read(opts, HSCOPE__FMT(HSCOPE_FORMAT_TEXT) |
                                                HSCOPE__FMT(HSCOPE_FORMAT_JSON),
                                      &ro, &err)) == HSCOPE_OK)
        hscope__waste_write(w, &ro, &o);
    hscope_status fin = w && write ? hscope__out_finish(&o) : HSCOPE_OK;
    if (st == HSCOPE_OK)
        st = fin;
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}
