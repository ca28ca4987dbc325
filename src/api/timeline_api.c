/*
 * timeline_api.c - the exported entry points of "memory over time": the
 * timeline (analysis/timeline.c) and export (report/export.c).  Argument
 * and option checks, error copy-out, accessors.
 */
#include <math.h>
#include <string.h>

#include "../core/core.h"
#include "../analysis/tally.h"
#include "../analysis/timeline.h"
#include "../report/export.h"

/* ------------------------------------------------------------------ */
/* options                                                             */
/* ------------------------------------------------------------------ */

HSCOPE_API void
hscope_timeline_options_init(hscope_timeline_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->size = sizeof(*opts);
}

HSCOPE_API void
hscope_export_options_init(hscope_export_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->size = sizeof(*opts);
}

/* A caller's sized options struct into a full-size copy (NULL: d as is). */
static hscope_status
read_sized(const void *in, void *d, size_t known, const char *what, hscope_error *err)
{
    if (!in)
        return HSCOPE_OK;
    uint32_t size;
    memcpy(&size, in, sizeof(size));
    if (size < 2 * sizeof(uint32_t))
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "%s.size is %u: set it with the _INIT macro or the _init() "
                            "function", what, size);
    if (!hscope__tail_is_zero(in, size, known))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "%s has unknown non-zero fields (newer header than library?)", what);
    memcpy(d, in, size < known ? size : known);
    return HSCOPE_OK;
}

static hscope_status
check_order(int32_t order, hscope_error *err)
{
    if (order < HSCOPE_ORDER_AUTO || order > HSCOPE_ORDER_GIVEN)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown order %d", (int)order);
    return HSCOPE_OK;
}

static hscope_status
read_timeline_options(const hscope_timeline_options *in, hscope_timeline_options *o,
                      hscope_error *err)
{
    hscope_timeline_options_init(o);
    hscope_status st = read_sized(in, o, sizeof(*o), "hscope_timeline_options", err);
    if (st != HSCOPE_OK)
        return st;
    if (o->flags & ~(uint32_t)(HSCOPE_TIMELINE_KEEP_DUMPER | HSCOPE_TIMELINE_GREW |
                               HSCOPE_TIMELINE_KEEP_TRACER))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown timeline flags 0x%x", o->flags);
    if (o->by && hscope__tally_key(o->by) < 0)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown tally key \"%s\"", o->by);
    if (o->metric != 0 && o->metric != HSCOPE_METRIC_MEMSIZE && o->metric != HSCOPE_METRIC_COUNT)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown metric %d", (int)o->metric);
    if (o->min_dumps == 1)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "min_dumps is 1: a trend needs at least 2 dumps");
    return check_order(o->order, err);
}

/* ------------------------------------------------------------------ */
/* timeline                                                            */
/* ------------------------------------------------------------------ */

HSCOPE_API hscope_status
hscope_timeline_compute(hscope_timeline_t **out, const char *const *paths, uint64_t n,
                        const hscope_load_options *load, const hscope_timeline_options *opts,
                        hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options lo;
    hscope_timeline_options o;
    hscope_status st = HSCOPE_OK;
    if (!out)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out is NULL");
    else
        *out = NULL;
    if (st == HSCOPE_OK)
        st = hscope__check_paths(paths, n, &err);
    if (st == HSCOPE_OK)
        st = hscope__read_load_options(load, &lo, &err);
    if (st == HSCOPE_OK)
        st = read_timeline_options(opts, &o, &err);
    if (st == HSCOPE_OK)
        st = hscope__timeline_compute(out, paths, n, &lo, &o, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API void
hscope_timeline_free(hscope_timeline_t *tl)
{
    hscope__timeline_free(tl);
}

HSCOPE_API const char *
hscope_timeline_by(const hscope_timeline_t *tl)
{
    return tl ? tl->by : NULL;
}

HSCOPE_API int32_t
hscope_timeline_metric(const hscope_timeline_t *tl)
{
    return tl ? tl->metric : 0;
}

HSCOPE_API const char *
hscope_timeline_order(const hscope_timeline_t *tl)
{
    return tl ? tl->order.name : NULL;
}

HSCOPE_API const char *
hscope_timeline_order_source(const hscope_timeline_t *tl)
{
    return tl ? tl->order.source : NULL;
}

HSCOPE_API int32_t
hscope_timeline_times_known(const hscope_timeline_t *tl)
{
    return tl ? tl->order.times_known : 0;
}

HSCOPE_API uint64_t
hscope_timeline_dump_count(const hscope_timeline_t *tl)
{
    return tl ? tl->nd : 0;
}

static const hscope__tl_dump *
dump_at(const hscope_timeline_t *tl, uint64_t i)
{
    return tl && i < tl->nd ? &tl->d[i] : NULL;
}

HSCOPE_API const char *
hscope_timeline_dump_path(const hscope_timeline_t *tl, uint64_t i)
{
    const hscope__tl_dump *d = dump_at(tl, i);
    return d ? d->path : NULL;
}

HSCOPE_API uint64_t
hscope_timeline_dump_given(const hscope_timeline_t *tl, uint64_t i)
{
    const hscope__tl_dump *d = dump_at(tl, i);
    return d ? d->given : 0;
}

/* x * scale rounded to an int64_t (saturated). */
static int64_t
fixed(double x, double scale)
{
    double v = x * scale;
    if (v != v)
        return HSCOPE_NO_VALUE;
    if (v >= 9.2e18)
        return INT64_MAX;
    if (v <= -9.2e18)
        return INT64_MIN + 1;
    return (int64_t)llround(v);
}

HSCOPE_API int64_t
hscope_timeline_dump_time_ms(const hscope_timeline_t *tl, uint64_t i)
{
    const hscope__tl_dump *d = dump_at(tl, i);
    return d && d->has_time ? fixed(d->time, 1000.0) : HSCOPE_NO_VALUE;
}

HSCOPE_API hscope_status
hscope_timeline_dump_totals(const hscope_timeline_t *tl, uint64_t i, uint64_t *count,
                            uint64_t *memsize)
{
    const hscope__tl_dump *d = dump_at(tl, i);
    if (!d)
        return HSCOPE_ERR_NOT_FOUND;
    if (count)
        *count = d->count;
    if (memsize)
        *memsize = d->memsize;
    return HSCOPE_OK;
}

HSCOPE_API uint64_t
hscope_timeline_dump_excluded(const hscope_timeline_t *tl, uint64_t i)
{
    const hscope__tl_dump *d = dump_at(tl, i);
    return d ? d->excluded : 0;
}

HSCOPE_API void
hscope_timeline_dump_excluded_tracer(const hscope_timeline_t *tl, uint64_t i, uint64_t *objects,
                                     uint64_t *memsize)
{
    const hscope__tl_dump *d = dump_at(tl, i);
    if (objects)
        *objects = d ? d->tracer : 0;
    if (memsize)
        *memsize = d ? d->tracer_mem : 0;
}

/* The load statistics of a dump (NULL: out of range) into a caller's. */
static hscope_status
stats_out(const hscope_load_stats *src, hscope_load_stats *stats)
{
    if (!stats || stats->size < sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    if (!src)
        return HSCOPE_ERR_NOT_FOUND;
    hscope__stats_copy_out(stats, src);
    return HSCOPE_OK;
}

/* Lines of a dump skipped for `reason` (skipped NULL: out of range). */
static uint64_t
skipped_of(const uint64_t *skipped, int32_t reason)
{
    return skipped && reason >= 0 && reason < HSCOPE_SKIP__COUNT ? skipped[reason] : 0;
}

HSCOPE_API hscope_status
hscope_timeline_dump_stats(const hscope_timeline_t *tl, uint64_t i, hscope_load_stats *stats)
{
    const hscope__tl_dump *d = dump_at(tl, i);
    return stats_out(d ? &d->stats : NULL, stats);
}

HSCOPE_API uint64_t
hscope_timeline_dump_skipped(const hscope_timeline_t *tl, uint64_t i, int32_t reason)
{
    const hscope__tl_dump *d = dump_at(tl, i);
    return skipped_of(d ? d->skipped : NULL, reason);
}

HSCOPE_API uint64_t
hscope_timeline_group_count(const hscope_timeline_t *tl)
{
    return tl ? tl->ng : 0;
}

HSCOPE_API uint64_t
hscope_timeline_growing_count(const hscope_timeline_t *tl)
{
    return tl ? tl->growing : 0;
}

static const hscope__tl_group *
group_at(const hscope_timeline_t *tl, uint64_t g)
{
    return tl && g < tl->ng ? &tl->g[g] : NULL;
}

HSCOPE_API const char *
hscope_timeline_group_key(const hscope_timeline_t *tl, uint64_t g)
{
    const hscope__tl_group *x = group_at(tl, g);
    return x ? x->key : NULL;
}

HSCOPE_API const uint64_t *
hscope_timeline_group_series(const hscope_timeline_t *tl, uint64_t g, int32_t metric)
{
    const hscope__tl_group *x = group_at(tl, g);
    if (!x)
        return NULL;
    if (metric == HSCOPE_METRIC_COUNT)
        return x->count;
    return metric == HSCOPE_METRIC_MEMSIZE ? x->memsize : NULL;
}

HSCOPE_API hscope_status
hscope_timeline_group_fit(const hscope_timeline_t *tl, uint64_t g, int64_t *slope_per_step_milli,
                          int64_t *slope_per_hour_milli, int64_t *r2_micro, int64_t *mean_milli,
                          int64_t *rise_milli)
{
    const hscope__tl_group *x = group_at(tl, g);
    if (!x)
        return HSCOPE_ERR_NOT_FOUND;
    int fit = tl->nd >= 2;
    if (slope_per_step_milli)
        *slope_per_step_milli = fit ? fixed(x->slope, 1e3) : HSCOPE_NO_VALUE;
    if (slope_per_hour_milli)
        *slope_per_hour_milli = x->has_slope_h ? fixed(x->slope_h, 1e3) : HSCOPE_NO_VALUE;
    if (r2_micro)
        *r2_micro = fit ? fixed(x->r2, 1e6) : HSCOPE_NO_VALUE;
    if (mean_milli)
        *mean_milli = fixed(x->mean, 1e3);
    if (rise_milli)
        *rise_milli = fixed(x->rise, 1e3);
    return HSCOPE_OK;
}

HSCOPE_API int32_t
hscope_timeline_group_growing(const hscope_timeline_t *tl, uint64_t g)
{
    const hscope__tl_group *x = group_at(tl, g);
    return x ? x->growing : 0;
}

HSCOPE_API uint32_t
hscope_timeline_warnings(const hscope_timeline_t *tl)
{
    return tl ? tl->warn : 0;
}

HSCOPE_API const char *
hscope_timeline_warning_text(const hscope_timeline_t *tl)
{
    return tl && tl->warn_text ? tl->warn_text : "";
}

HSCOPE_API uint64_t
hscope_timeline_warning_count(const hscope_timeline_t *tl)
{
    return tl ? tl->nw : 0;
}

HSCOPE_API hscope_status
hscope_timeline_warning(const hscope_timeline_t *tl, uint64_t i, const char **code,
                        const char **message)
{
    if (!tl || i >= tl->nw)
        return HSCOPE_ERR_NOT_FOUND;
    if (code)
        *code = tl->w[i].code;
    if (message)
        *message = tl->w[i].message;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* export                                                              */
/* ------------------------------------------------------------------ */

static hscope_status
read_export_options(const hscope_export_options *in, hscope_export_options *o,
                    hscope_error *err)
{
    hscope_export_options_init(o);
    hscope_status st = read_sized(in, o, sizeof(*o), "hscope_export_options", err);
    if (st != HSCOPE_OK)
        return st;
    if (o->format != 0 && o->format != HSCOPE_FORMAT_CSV && o->format != HSCOPE_FORMAT_JSONL)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "export writes CSV or JSON lines, not format %d", (int)o->format);
    if (o->reserved)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "hscope_export_options.reserved is not 0");
    if (o->first_id > 1000000000u)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "first_id %llu: at most 10^9", (unsigned long long)o->first_id);
    return check_order(o->order, err);
}

HSCOPE_API hscope_status
hscope_export_files(hscope_export_t **out, const char *const *paths, uint64_t n,
                    const char *dir, const hscope_load_options *load,
                    const hscope_export_options *opts, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options lo;
    hscope_export_options o;
    if (out)
        *out = NULL;
    hscope_status st = hscope__check_paths(paths, n, &err);
    if (st == HSCOPE_OK && (!dir || !*dir))
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "no output directory given");
    if (st == HSCOPE_OK)
        st = hscope__read_load_options(load, &lo, &err);
    if (st == HSCOPE_OK)
        st = read_export_options(opts, &o, &err);
    if (st == HSCOPE_OK)
        st = hscope__export_files(out, paths, n, dir, &lo, &o, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API void
hscope_export_free(hscope_export_t *ex)
{
    hscope__export_free(ex);
}

static const hscope__ex_dump *
export_dump_at(const hscope_export_t *ex, uint64_t i)
{
    return ex && i < ex->nd ? &ex->d[i] : NULL;
}

HSCOPE_API uint64_t
hscope_export_dump_count(const hscope_export_t *ex)
{
    return ex ? ex->nd : 0;
}

HSCOPE_API const char *
hscope_export_dump_path(const hscope_export_t *ex, uint64_t i)
{
    const hscope__ex_dump *d = export_dump_at(ex, i);
    return d ? d->path : NULL;
}

HSCOPE_API void
hscope_export_totals(const hscope_export_t *ex, uint64_t *objects, uint64_t *references)
{
    if (objects)
        *objects = ex ? ex->objects : 0;
    if (references)
        *references = ex ? ex->references : 0;
}

HSCOPE_API hscope_status
hscope_export_dump_stats(const hscope_export_t *ex, uint64_t i, hscope_load_stats *stats)
{
    const hscope__ex_dump *d = export_dump_at(ex, i);
    return stats_out(d ? &d->stats : NULL, stats);
}

HSCOPE_API uint64_t
hscope_export_dump_skipped(const hscope_export_t *ex, uint64_t i, int32_t reason)
{
    const hscope__ex_dump *d = export_dump_at(ex, i);
    return skipped_of(d ? d->skipped : NULL, reason);
}
