/*
 * rb_waste.c - Heapscope::Waste: duplicate, empty and oversized strings, arrays
 * and hashes.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/encoding.h>

#include <string.h>

#include "rb_heapscope.h"

static VALUE cWaste;

static HANDLE_TYPE(waste_type, "Heapscope::Waste");

static void free_waste(void *p) { hscope_waste_free(p); }

/* ---- Waste ---- */

/* waste options from Ruby: by (:site / "file:line" / :gem), keep_dumper,
 * keep_tracer, ratio, min_slack */
static void
waste_opts(hscope_waste_options *o, VALUE by, VALUE keep_dumper, VALUE keep_tracer, VALUE ratio,
           VALUE min_slack)
{
    hscope_waste_options_init(o);
    if (!NIL_P(by)) {
        VALUE s = rb_String(by);
        const char *b = StringValueCStr(s);
        if (strcmp(b, "gem") == 0)
            o->by = HSCOPE_WASTE_BY_GEM;
        else if (strcmp(b, "file:line") != 0 && strcmp(b, "site") != 0)
            rb_raise(rb_eArgError, "by: must be \"file:line\" (or :site) or :gem");
    }
    if (RTEST(keep_dumper))
        o->flags |= HSCOPE_WASTE_KEEP_DUMPER;
    if (RTEST(keep_tracer))
        o->flags |= HSCOPE_WASTE_KEEP_TRACER;
    if (!NIL_P(ratio)) {
        long r = NUM2LONG(ratio);
        if (r < 2 || r > 1000000)
            rb_raise(rb_eArgError, "ratio: must be from 2 to 1000000");
        o->ratio = (uint32_t)r;
    }
    if (!NIL_P(min_slack)) {
        long long m = NUM2LL(min_slack);
        if (m < 1)
            rb_raise(rb_eArgError, "min_slack: must be at least 1");
        o->min_slack = (uint64_t)m;
    }
}

/* Waste._file(path, load_opts, by, keep_dumper, keep_tracer, ratio, min_slack): the
 * dump streamed (no heap is loaded); cancellable like a load. */
static VALUE
waste_s_file(VALUE klass, VALUE path, VALUE opts, VALUE by, VALUE keep_dumper,
             VALUE keep_tracer, VALUE ratio, VALUE min_slack)
{
    analysis_args x;
    load_args l;
    memset(&x, 0, sizeof(x));
    memset(&l, 0, sizeof(l));
    FilePathValue(path);
    path = rb_str_new_frozen(path);
    x.pa = StringValueCStr(path);
    hscope_rb_load_options(opts, &l.opts);
    l.progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    x.load = &l;
    waste_opts(&x.wopts, by, keep_dumper, keep_tracer, ratio, min_slack);
    VALUE obj = hscope_rb_handle_new(klass, &waste_type, free_waste, Qfalse, NULL);
    x.out = DATA_PTR(obj);
    x.what = AN_WASTE_FILE;
    hscope_rb_run_analysis(&x);
    hscope_rb_handle_account(x.out, hscope_waste_memory(x.out->ptr));
    RB_GC_GUARD(path);
    RB_GC_GUARD(l.progress);
    return obj;
}

/* Heap#_waste(by, keep_dumper, keep_tracer, ratio, min_slack): from the loaded heap
 * (the result keeps no reference to it). */
static VALUE
heap_waste(VALUE self, VALUE by, VALUE keep_dumper, VALUE keep_tracer, VALUE ratio,
           VALUE min_slack)
{
    analysis_args x;
    memset(&x, 0, sizeof(x));
    x.cheap = hscope_rb_heap_get(self);
    waste_opts(&x.wopts, by, keep_dumper, keep_tracer, ratio, min_slack);
    VALUE obj = hscope_rb_handle_new(cWaste, &waste_type, free_waste, Qfalse, NULL);
    x.out = DATA_PTR(obj);
    x.what = AN_WASTE_HEAP;
    hscope_rb_run_analysis(&x);
    hscope_rb_handle_account(x.out, hscope_waste_memory(x.out->ptr));
    RB_GC_GUARD(self);
    return obj;
}

static const hscope_waste_t *
waste_get(VALUE self)
{
    return hscope_rb_handle_get(self, &waste_type)->ptr;
}

static void
hset(VALUE h, const char *k, uint64_t v)
{
    rb_hash_aset(h, ID2SYM(rb_intern(k)), ULL2NUM(v));
}

/* Waste#_totals -> Hash of counts (symbols), warnings as bits */
static VALUE
waste_totals(VALUE self)
{
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    hscope_waste_totals_get(waste_get(self), &t);
    VALUE h = rb_hash_new();
    hset(h, "objects", t.objects);
    hset(h, "memsize", t.memsize);
    hset(h, "count", t.count);
    hset(h, "saving", t.saving);
    hset(h, "duplicate_count", t.duplicate_count);
    hset(h, "duplicate_saving", t.duplicate_saving);
    hset(h, "duplicate_values", t.duplicate_values);
    hset(h, "duplicate_copies", t.duplicate_copies);
    hset(h, "empty_count", t.empty_count);
    hset(h, "empty_saving", t.empty_saving);
    hset(h, "oversized_count", t.oversized_count);
    hset(h, "oversized_saving", t.oversized_saving);
    hset(h, "shared_count", t.shared_count);
    hset(h, "shared_memsize", t.shared_memsize);
    hset(h, "no_value_count", t.no_value_count);
    hset(h, "no_value_memsize", t.no_value_memsize);
    hset(h, "truncated_count", t.truncated_count);
    hset(h, "truncated_memsize", t.truncated_memsize);
    hset(h, "collision_count", t.collision_count);
    hset(h, "excluded", t.excluded);
    uint64_t tn = 0, tm = 0;
    hscope_waste_excluded_tracer(waste_get(self), &tn, &tm);
    hset(h, "excluded_tracer", tn);
    hset(h, "excluded_tracer_memsize", tm);
    hset(h, "untraced", t.untraced);
    hset(h, "group_count", t.group_count);
    hset(h, "dump_objects", t.dump_objects);
    hset(h, "warnings", t.warnings);
    return h;
}

static VALUE
kind_sym(int32_t kind)
{
    return ID2SYM(rb_intern(kind == HSCOPE_WASTE_DUPLICATE ? "duplicate"
                            : kind == HSCOPE_WASTE_EMPTY   ? "empty"
                                                           : "oversized"));
}

/* The fix kind (HSCOPE_WASTE_FIX_*) as the JSON names it. */
static VALUE
fix_kind_sym(int32_t k)
{
    static const char *const names[] = { "untraced", "ruby", "stdlib", "gem", "literal",
                                         "intern", "intern_or_literal", "lazy", "resize" };
    return k >= 1 && k <= 9 ? ID2SYM(rb_intern(names[k - 1])) : Qnil;
}

/* Waste#_rows -> [[key, kind, type, count, saving, memsize, copies, frozen,
 * fstring, buffer, used, fix, [[value index, copies, saving], ...], fix_kind,
 * chilled], ...] */
static VALUE
waste_rows(VALUE self)
{
    const hscope_waste_t *w = waste_get(self);
    uint64_t n = hscope_waste_row_count(w);
    VALUE rows = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++) {
        hscope_waste_row r = { .size = sizeof(r) };
        hscope_waste_row_get(w, i, &r);
        VALUE vals = rb_ary_new_capa((long)r.values);
        for (uint64_t j = 0; j < r.values; j++) {
            uint64_t v, c, s;
            if (hscope_waste_row_value(w, i, j, &v, &c, &s) == HSCOPE_OK)
                rb_ary_push(vals, rb_ary_new_from_args(3, ULL2NUM(v), ULL2NUM(c), ULL2NUM(s)));
        }
        const char *type = r.type == HSCOPE_TYPE_ARRAY ? "ARRAY"
                           : r.type == HSCOPE_TYPE_HASH ? "HASH" : "STRING";
        VALUE row = rb_ary_new_from_args(
            15, rb_str_new_cstr(r.key), kind_sym(r.kind), rb_str_new_cstr(type),
            ULL2NUM(r.count), ULL2NUM(r.saving), ULL2NUM(r.memsize), ULL2NUM(r.copies),
            ULL2NUM(r.frozen), ULL2NUM(r.fstring), ULL2NUM(r.buffer), ULL2NUM(r.used),
            rb_str_new_cstr(r.fix), vals, fix_kind_sym(r.fix_kind), ULL2NUM(r.chilled));
        rb_ary_push(rows, row);
    }
    return rows;
}

/* Waste#_values -> [[hash, length, bytes, copies, memsize, saving, frozen,
 * fstring, [[key, copies, saving], ...]], ...] */
static VALUE
waste_values(VALUE self)
{
    const hscope_waste_t *w = waste_get(self);
    uint64_t n = hscope_waste_value_count(w);
    VALUE out = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++) {
        hscope_waste_value v = { .size = sizeof(v) };
        hscope_waste_value_get(w, i, &v);
        VALUE sites = rb_ary_new_capa((long)v.sites);
        for (uint64_t j = 0; j < v.sites; j++) {
            const char *key;
            uint64_t c, s;
            if (hscope_waste_value_site(w, i, j, &key, &c, &s) == HSCOPE_OK)
                rb_ary_push(sites, rb_ary_new_from_args(3, rb_str_new_cstr(key), ULL2NUM(c),
                                                        ULL2NUM(s)));
        }
        VALUE row = rb_ary_new_from_args(
            9, ULL2NUM(v.hash), ULL2NUM(v.length), rb_str_new(v.data, (long)v.length),
            ULL2NUM(v.copies), ULL2NUM(v.memsize), ULL2NUM(v.saving), ULL2NUM(v.frozen),
            ULL2NUM(v.fstring), sites);
        rb_ary_push(out, row);
    }
    return out;
}

/* The library writers' output, appended to a Ruby String. */
static int32_t
append_to_string(void *ud, const char *data, uint64_t len)
{
    rb_str_cat(*(VALUE *)ud, data, (long)len);
    return 0;
}

/* Waste#_report(format, flags, top, width, name) -> String */
static VALUE
waste_report(VALUE self, VALUE format, VALUE flags, VALUE top, VALUE width, VALUE name)
{
    const hscope_waste_t *w = waste_get(self);
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = NUM2INT(format);
    ro.flags = NUM2UINT(flags);
    long long t = NUM2LL(top);
    ro.top = t <= 0 ? HSCOPE_TOP_ALL : (uint64_t)t;
    ro.width = NIL_P(width) ? 0 : NUM2UINT(width);
    const char *names[1] = { NULL };
    if (!NIL_P(name)) {
        name = rb_str_new_frozen(StringValue(name));
        names[0] = StringValueCStr(name);
        ro.dump_names = names;
        ro.dump_name_count = 1;
    }
    VALUE out = rb_str_buf_new(4096);
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_waste_write(w, &ro, append_to_string, &out, &err);
    RB_GC_GUARD(name);
    if (st != HSCOPE_OK)
        hscope_rb_raise_status(st, &err);
    rb_enc_associate(out, rb_utf8_encoding());
    return out;
}

void
hscope_rb_init_waste(VALUE mod)
{
    cWaste = rb_define_class_under(mod, "Waste", rb_cObject);
    rb_undef_alloc_func(cWaste);
    rb_define_singleton_method(cWaste, "_file", waste_s_file, 7);
    rb_define_method(cWaste, "_totals", waste_totals, 0);
    rb_define_method(cWaste, "_rows", waste_rows, 0);
    rb_define_method(cWaste, "_values", waste_values, 0);
    rb_define_method(cWaste, "_report", waste_report, 5);
    rb_define_method(hscope_rb_cHeap, "_waste", heap_waste, 5);
}
