/*
 * rb_tally.c - Native::Tally: rows by key, of a heap, a diff, a dominator tree
 * or a dump file.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "rb_heapscope.h"

VALUE hscope_rb_cTally;

static HANDLE_TYPE(tally_type, "Heapscope::Native::Tally");

static void free_tally(void *p) { hscope_tally_free(p); }

/* A Native::Tally to be filled by an analysis: its ids refer to `heap`,
 * which `parent` keeps alive. */
VALUE
hscope_rb_tally_new(VALUE parent, hscope_heap_t *heap)
{
    return hscope_rb_handle_new(hscope_rb_cTally, &tally_type, free_tally, parent, heap);
}

rb_handle *
hscope_rb_tally_data(VALUE obj)
{
    return hscope_rb_handle_get(obj, &tally_type);
}

static const hscope_tally_t *
tally_get(VALUE self)
{
    return hscope_rb_tally_data(self)->ptr;
}

/* Heap#_tally(key, top, sort, keep_dumper, keep_tracer) -> Native::Tally */
static VALUE
heap_tally(VALUE self, VALUE key, VALUE top, VALUE sort, VALUE keep_dumper, VALUE keep_tracer)
{
    analysis_args a;
    memset(&a, 0, sizeof(a));
    a.heap = hscope_rb_heap_get(self);
    key = hscope_rb_tally_args(key, top, sort, &a.key, &a.topts);
    if (!RTEST(keep_dumper))
        a.topts.flags |= HSCOPE_TALLY_SKIP_DUMPER;
    if (!RTEST(keep_tracer))
        a.topts.flags |= HSCOPE_TALLY_SKIP_TRACER;
    VALUE obj = hscope_rb_tally_new(self, a.heap);
    a.out = DATA_PTR(obj);
    a.what = AN_TALLY;
    hscope_rb_run_analysis(&a);
    hscope_rb_handle_account(a.out, hscope_tally_memory(a.out->ptr));
    RB_GC_GUARD(key);
    return obj;
}

/* ---- Tally ---- */

static VALUE
tally_rows(VALUE self)
{
    rb_handle *h = hscope_rb_tally_data(self);
    uint64_t n = hscope_tally_row_count(h->ptr);
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++) {
        VALUE key = hscope_rb_cstr_or_nil(hscope_tally_row_key(h->ptr, i));
        rb_ary_push(r, rb_ary_new_from_args(3, key,
                                            ULL2NUM(hscope_tally_row_count_of(h->ptr, i)),
                                            ULL2NUM(hscope_tally_row_memsize(h->ptr, i))));
    }
    return r;
}

static VALUE
tally_group_count(VALUE self)
{
    return ULL2NUM(hscope_tally_group_count(tally_get(self)));
}

/* Native::Tally#excluded: the dumper's objects left out */
static VALUE
tally_excluded(VALUE self)
{
    return ULL2NUM(hscope_tally_excluded(tally_get(self)));
}

static VALUE
tally_totals(VALUE self)
{
    uint64_t c = 0, m = 0;
    hscope_tally_totals(tally_get(self), &c, &m);
    return rb_assoc_new(ULL2NUM(c), ULL2NUM(m));
}

/* Tally#_row_addresses(i, limit) -> [addresses] of the row's members
 * (tallies of a diff only), at most limit (nil: all). */
static VALUE
tally_row_addresses(VALUE self, VALUE vi, VALUE limit)
{
    rb_handle *h = hscope_rb_tally_data(self);
    const hscope_id *ids;
    uint64_t n;
    hscope_status st = hscope_tally_row_objects(h->ptr, NUM2ULL(vi), &ids, &n);
    if (st != HSCOPE_OK)
        hscope_rb_raise_status(st, NULL);
    if (!NIL_P(limit) && (uint64_t)NUM2ULL(limit) < n)
        n = NUM2ULL(limit);
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t k = 0; k < n; k++)
        rb_ary_push(r, ULL2NUM(hscope_heap_object_address(h->heap, ids[k])));
    RB_GC_GUARD(self);
    return r;
}

/* Native::Tally#_write(opts): a tally of a heap or of a dominator tree
 * (retained by key). */
static VALUE
tally_write(VALUE self, VALUE opts)
{
    return hscope_rb_write_handle(self, W_TALLY, (void *)tally_get(self), opts);
}

/* Native::Tally#by -> the key the tally groups by */
static VALUE
tally_by(VALUE self)
{
    return hscope_rb_cstr_or_nil(hscope_tally_by(tally_get(self)));
}

/* Native::Tally._file(path, load_opts, key, top, sort, keep_dumper,
 * keep_tracer): the
 * dump folded into a tally without building its graph (the histogram). */
static VALUE
tally_s_file(int argc, VALUE *argv, VALUE klass)
{
    VALUE path, opts, key, top, sort, keep_dumper, keep_tracer;
    rb_scan_args(argc, argv, "7", &path, &opts, &key, &top, &sort, &keep_dumper, &keep_tracer);
    analysis_args x;
    memset(&x, 0, sizeof(x));
    FilePathValue(path);
    path = rb_str_new_frozen(path);
    x.pa = StringValueCStr(path);
    key = hscope_rb_tally_args(key, top, sort, &x.key, &x.topts);
    if (!RTEST(keep_dumper))
        x.topts.flags |= HSCOPE_TALLY_SKIP_DUMPER;
    if (!RTEST(keep_tracer))
        x.topts.flags |= HSCOPE_TALLY_SKIP_TRACER;
    x.what = AN_TALLY_FILE;
    VALUE obj = hscope_rb_files_call(klass, &tally_type, free_tally, &x, Qnil, opts);
    rb_handle *h = DATA_PTR(obj);
    hscope_rb_handle_account(h, hscope_tally_memory(h->ptr));
    RB_GC_GUARD(path);
    RB_GC_GUARD(key);
    return obj;
}

void
hscope_rb_init_tally(VALUE mod)
{
    VALUE c = hscope_rb_cTally =
        rb_define_class_under(rb_define_module_under(mod, "Native"), "Tally", rb_cObject);
    rb_undef_alloc_func(c);
    rb_define_method(c, "rows", tally_rows, 0);
    rb_define_method(c, "group_count", tally_group_count, 0);
    rb_define_method(c, "totals", tally_totals, 0);
    rb_define_method(c, "excluded", tally_excluded, 0);
    rb_define_method(c, "_row_addresses", tally_row_addresses, 2);
    rb_define_method(c, "_write", tally_write, 1);
    rb_define_method(c, "by", tally_by, 0);
    rb_define_singleton_method(c, "_file", tally_s_file, -1);
    rb_define_method(hscope_rb_cHeap, "_tally", heap_tally, 5);
}
