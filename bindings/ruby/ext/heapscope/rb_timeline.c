/*
 * rb_timeline.c - Heapscope::Timeline: many dumps, streamed.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "rb_heapscope.h"

/* ------------------------------------------------------------------ */
/* many dumps: timeline (and diff --grew), histogram, export          */
/* ------------------------------------------------------------------ */

/*
 * Calls that read dump files themselves (streamed: no heap is loaded):
 * Heapscope.timeline and .grew (hscope_timeline_compute), .histogram
 * (hscope_tally_file), .export (hscope_export_files).  They run without
 * the GVL like a load, cancellable through the load's progress callback;
 * their results are written by the library's writers (rb_write.c).
 */

static HANDLE_TYPE(timeline_type, "Heapscope::Timeline");

static void free_timeline(void *p) { hscope_timeline_free(p); }

static VALUE cTimeline;

/* Timeline._compute(paths, load_opts, by, metric, order, flags, threads,
 * min_dumps): metric, order and flags are the library's codes
 * (HSCOPE_METRIC_*, HSCOPE_ORDER_*, HSCOPE_TIMELINE_*); by, threads and
 * min_dumps nil for the defaults. */
static VALUE
timeline_s_compute(int argc, VALUE *argv, VALUE klass)
{
    VALUE paths, opts, by, metric, order, flags, threads, min_dumps;
    rb_scan_args(argc, argv, "8", &paths, &opts, &by, &metric, &order, &flags, &threads,
                 &min_dumps);
    analysis_args x;
    memset(&x, 0, sizeof(x));
    hscope_timeline_options_init(&x.lopts);
    if (!NIL_P(by)) {
        by = rb_str_new_frozen(StringValue(by));
        x.lopts.by = StringValueCStr(by);
    }
    x.lopts.metric = NUM2INT(metric);
    x.lopts.order = NUM2INT(order);
    x.lopts.flags = NUM2UINT(flags);
    x.lopts.threads = NIL_P(threads) ? 0 : NUM2UINT(threads);
    x.lopts.min_dumps = NIL_P(min_dumps) ? 0 : NUM2UINT(min_dumps);
    if (!NIL_P(opts) && !NIL_P(rb_hash_lookup(opts, ID2SYM(rb_intern("progress"))))) {
        /* the proc runs with the GVL, which only this thread may take:
         * the dumps are folded one at a time, on this thread */
        if (x.lopts.threads > 1)
            rb_raise(rb_eArgError, "threads: a progress proc needs the dumps folded one at a "
                                   "time (threads: 1 or nil)");
        x.lopts.threads = 1;
    }
    x.what = AN_TIMELINE;
    VALUE obj = hscope_rb_files_call(klass, &timeline_type, free_timeline, &x, paths, opts);
    rb_handle *h = DATA_PTR(obj);
    hscope_rb_handle_account(h, hscope_timeline_memory(h->ptr));
    RB_GC_GUARD(by);
    return obj;
}

static const hscope_timeline_t *
timeline_get(VALUE self)
{
    return hscope_rb_handle_get(self, &timeline_type)->ptr;
}

static VALUE
timeline_by(VALUE self)
{
    return hscope_rb_cstr_or_nil(hscope_timeline_by(timeline_get(self)));
}

/* :memsize or :count: the series that was fitted and ranked */
static VALUE
timeline_metric(VALUE self)
{
    int32_t m = hscope_timeline_metric(timeline_get(self));
    return ID2SYM(rb_intern(m == HSCOPE_METRIC_COUNT ? "count" : "memsize"));
}

static VALUE
timeline_order(VALUE self)
{
    return hscope_rb_cstr_or_nil(hscope_timeline_order(timeline_get(self)));
}

static VALUE
timeline_order_source(VALUE self)
{
    return hscope_rb_cstr_or_nil(hscope_timeline_order_source(timeline_get(self)));
}

static VALUE
timeline_times_known(VALUE self)
{
    return hscope_timeline_times_known(timeline_get(self)) ? Qtrue : Qfalse;
}

static VALUE
timeline_dump_count(VALUE self)
{
    return ULL2NUM(hscope_timeline_dump_count(timeline_get(self)));
}

static VALUE
timeline_group_count(VALUE self)
{
    return ULL2NUM(hscope_timeline_group_count(timeline_get(self)));
}

static VALUE
timeline_growing_count(VALUE self)
{
    return ULL2NUM(hscope_timeline_growing_count(timeline_get(self)));
}

static VALUE
timeline_warning_bits(VALUE self)
{
    return UINT2NUM(hscope_timeline_warnings(timeline_get(self)));
}

/* A fixed-point value of the library, nil for HSCOPE_NO_VALUE. */
static VALUE
fixed_or_nil(int64_t v)
{
    return v == HSCOPE_NO_VALUE ? Qnil : LL2NUM(v);
}

/* Timeline#_dump(i) -> [path, index among the paths given, time in ms or
 * nil, count, memsize, dumper objects left out, objects of the dump,
 * allocation tracer objects left out, their memsize] */
static VALUE
timeline_dump(VALUE self, VALUE vi)
{
    const hscope_timeline_t *tl = timeline_get(self);
    uint64_t i = NUM2ULL(vi);
    uint64_t count = 0, memsize = 0;
    if (hscope_timeline_dump_totals(tl, i, &count, &memsize) != HSCOPE_OK)
        rb_raise(rb_eIndexError, "no dump %llu", (unsigned long long)i);
    hscope_load_stats st = HSCOPE_LOAD_STATS_INIT;
    hscope_timeline_dump_stats(tl, i, &st);
    uint64_t tn = 0, tm = 0;
    hscope_timeline_dump_excluded_tracer(tl, i, &tn, &tm);
    VALUE r = rb_ary_new_from_args(
        9, hscope_rb_cstr_or_nil(hscope_timeline_dump_path(tl, i)),
        ULL2NUM(hscope_timeline_dump_given(tl, i)),
        fixed_or_nil(hscope_timeline_dump_time_ms(tl, i)), ULL2NUM(count), ULL2NUM(memsize),
        ULL2NUM(hscope_timeline_dump_excluded(tl, i)), ULL2NUM(st.objects), ULL2NUM(tn),
        ULL2NUM(tm));
    RB_GC_GUARD(self);
    return r;
}

static VALUE
u64_ary(const uint64_t *v, uint64_t n)
{
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++)
        rb_ary_push(r, ULL2NUM(v[i]));
    return r;
}

/* Timeline#_group(g) -> [key, count per dump, memsize per dump, slope per
 * step (thousandths), slope per hour (thousandths), R^2 (millionths),
 * mean (thousandths), rise (thousandths), growing]; nil past the end. */
static VALUE
timeline_group(VALUE self, VALUE vg)
{
    const hscope_timeline_t *tl = timeline_get(self);
    uint64_t g = NUM2ULL(vg), n = hscope_timeline_dump_count(tl);
    int64_t step, hour, r2, mean, rise;
    if (hscope_timeline_group_fit(tl, g, &step, &hour, &r2, &mean, &rise) != HSCOPE_OK)
        return Qnil;
    VALUE r = rb_ary_new_from_args(
        9, hscope_rb_cstr_or_nil(hscope_timeline_group_key(tl, g)),
        u64_ary(hscope_timeline_group_series(tl, g, HSCOPE_METRIC_COUNT), n),
        u64_ary(hscope_timeline_group_series(tl, g, HSCOPE_METRIC_MEMSIZE), n), fixed_or_nil(step),
        fixed_or_nil(hour), fixed_or_nil(r2), fixed_or_nil(mean), fixed_or_nil(rise),
        hscope_timeline_group_growing(tl, g) ? Qtrue : Qfalse);
    RB_GC_GUARD(self);
    return r;
}

/* Timeline#_write(opts) */
static VALUE
timeline_write(VALUE self, VALUE opts)
{
    return hscope_rb_write_handle(self, W_TIMELINE, (void *)timeline_get(self), opts);
}

void
hscope_rb_init_timeline(VALUE mod)
{
    cTimeline = rb_define_class_under(mod, "Timeline", rb_cObject);
    rb_undef_alloc_func(cTimeline);
    rb_define_singleton_method(cTimeline, "_compute", timeline_s_compute, -1);
    rb_define_method(cTimeline, "by", timeline_by, 0);
    rb_define_method(cTimeline, "metric", timeline_metric, 0);
    rb_define_method(cTimeline, "order", timeline_order, 0);
    rb_define_method(cTimeline, "order_source", timeline_order_source, 0);
    rb_define_method(cTimeline, "times_known?", timeline_times_known, 0);
    rb_define_method(cTimeline, "dump_count", timeline_dump_count, 0);
    rb_define_method(cTimeline, "group_count", timeline_group_count, 0);
    rb_define_method(cTimeline, "growing_count", timeline_growing_count, 0);
    rb_define_method(cTimeline, "warning_bits", timeline_warning_bits, 0);
    rb_define_method(cTimeline, "_dump", timeline_dump, 1);
    rb_define_method(cTimeline, "_group", timeline_group, 1);
    rb_define_method(cTimeline, "_write", timeline_write, 1);
}
