/*
 * rb_diff.c - Heapscope::Diff and Native::Suspects.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/thread.h>

#include <string.h>

#include "rb_heapscope.h"

static VALUE cDiff, cSuspects;

static HANDLE_TYPE(diff_type, "Heapscope::Diff");

static void free_diff(void *p) { hscope_diff_free(p); }

/* ---- Diff ---- */

static uint32_t
diff_flags(VALUE address_only, VALUE keep_dumper, VALUE keep_tracer)
{
    return (RTEST(address_only) ? HSCOPE_DIFF_ADDRESS_ONLY : 0) |
           (RTEST(keep_dumper) ? HSCOPE_DIFF_KEEP_DUMPER : 0) |
           (RTEST(keep_tracer) ? HSCOPE_DIFF_KEEP_TRACER : 0);
}

/* Diff._compute(a, b, c_or_nil, address_only, keep_dumper, keep_tracer) */
static VALUE
diff_s_compute(VALUE klass, VALUE a, VALUE b, VALUE c, VALUE address_only, VALUE keep_dumper,
               VALUE keep_tracer)
{
    analysis_args x;
    memset(&x, 0, sizeof(x));
    x.a = hscope_rb_heap_get(a);
    x.b = hscope_rb_heap_get(b);
    x.c = NIL_P(c) ? NULL : hscope_rb_heap_get(c);
    hscope_diff_options_init(&x.fopts);
    x.fopts.flags = diff_flags(address_only, keep_dumper, keep_tracer);
    VALUE target = NIL_P(c) ? b : c;
    VALUE obj =
        hscope_rb_handle_new(klass, &diff_type, free_diff, target, hscope_rb_heap_get(target));
    x.out = DATA_PTR(obj);
    x.what = AN_DIFF;
    hscope_rb_run_analysis(&x);
    hscope_rb_handle_account(x.out, hscope_diff_memory(x.out->ptr));
    RB_GC_GUARD(a);
    RB_GC_GUARD(b);
    RB_GC_GUARD(c);
    return obj;
}

/* Diff._files(path_a, path_b, path_c_or_nil, load_opts, address_only,
 * keep_dumper, keep_tracer): only the last dump is loaded; the others are streamed.
 * The loaded heap is borrowed from the diff: its Heap object and the Diff
 * keep each other alive. */
static VALUE
diff_s_files(VALUE klass, VALUE pa, VALUE pb, VALUE pc, VALUE opts, VALUE address_only,
             VALUE keep_dumper, VALUE keep_tracer)
{
    analysis_args x;
    load_args l;
    memset(&x, 0, sizeof(x));
    memset(&l, 0, sizeof(l));
    FilePathValue(pa);
    FilePathValue(pb);
    pa = rb_str_new_frozen(pa);
    pb = rb_str_new_frozen(pb);
    x.pa = StringValueCStr(pa);
    x.pb = StringValueCStr(pb);
    if (!NIL_P(pc)) {
        FilePathValue(pc);
        pc = rb_str_new_frozen(pc);
        x.pc = StringValueCStr(pc);
    }
    hscope_rb_load_options(opts, &l.opts);
    l.progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    x.load = &l;
    hscope_diff_options_init(&x.fopts);
    x.fopts.flags = diff_flags(address_only, keep_dumper, keep_tracer);
    VALUE obj = hscope_rb_handle_new(klass, &diff_type, free_diff, Qfalse, NULL);
    x.out = DATA_PTR(obj);
    x.what = AN_DIFF_FILES;
    hscope_rb_run_analysis(&x);
    rb_handle *d = x.out;
    d->heap = hscope_diff_heap(d->ptr);
    VALUE hobj = hscope_rb_heap_alloc(hscope_rb_cHeap);
    rb_heap *hh = hscope_rb_heap_data(hobj);
    hh->heap = d->heap;
    RB_OBJ_WRITE(hobj, &hh->owner, obj);
    RB_OBJ_WRITE(obj, &d->parent, hobj);
    hscope_rb_heap_account(hh);
    hscope_rb_handle_account(d, hscope_diff_memory(d->ptr));
    RB_GC_GUARD(pa);
    RB_GC_GUARD(pb);
    RB_GC_GUARD(pc);
    RB_GC_GUARD(l.progress);
    return obj;
}

static hscope_diff_t *
diff_get(VALUE self)
{
    return hscope_rb_handle_get(self, &diff_type)->ptr;
}

/* The leaked set. */
static const hscope_id *
diff_ids(const rb_handle *h, uint64_t *n)
{
    *n = hscope_diff_count(h->ptr);
    return hscope_diff_objects(h->ptr);
}

static VALUE
diff_count(VALUE self)
{
    return ULL2NUM(hscope_diff_count(diff_get(self)));
}

static VALUE
diff_memsize(VALUE self)
{
    return ULL2NUM(hscope_diff_memsize(diff_get(self)));
}

/* Objects left out as the dumper's own (ObjectSpace.dump_all's, the gem's
 * snapshot code's: the library's rule). */
static VALUE
diff_excluded(VALUE self)
{
    return ULL2NUM(hscope_diff_excluded(diff_get(self)));
}

/* Diff#_excluded_tracer -> [objects, memsize] of the allocation tracer left out */
static VALUE
diff_excluded_tracer(VALUE self)
{
    uint64_t n = 0, m = 0;
    hscope_diff_excluded_tracer(diff_get(self), &n, &m);
    return rb_ary_new_from_args(2, ULL2NUM(n), ULL2NUM(m));
}

static VALUE
diff_reused(VALUE self)
{
    return ULL2NUM(hscope_diff_reused_addresses(diff_get(self)));
}

static VALUE
diff_warning_bits(VALUE self)
{
    return UINT2NUM(hscope_diff_warnings(diff_get(self)));
}

static VALUE
diff_warning_text(VALUE self)
{
    return hscope_rb_cstr_or_nil(hscope_diff_warning_text(diff_get(self)));
}

static VALUE
diff_snapshot_objects(VALUE self)
{
    hscope_diff_t *d = diff_get(self);
    return rb_ary_new_from_args(3, ULL2NUM(hscope_diff_snapshot_objects(d, 0)),
                                ULL2NUM(hscope_diff_snapshot_objects(d, 1)),
                                ULL2NUM(hscope_diff_snapshot_objects(d, 2)));
}

/* Diff#heap: the Heap the leaked objects belong to (c, or b). */
static VALUE
diff_heap(VALUE self)
{
    return hscope_rb_handle_get(self, &diff_type)->parent;
}

/* Diff#_addresses(limit) -> leaked addresses, ascending by dump order */
static VALUE
diff_addresses(VALUE self, VALUE limit)
{
    rb_handle *h = hscope_rb_handle_get(self, &diff_type);
    uint64_t n;
    const hscope_id *ids = diff_ids(h, &n);
    if (!NIL_P(limit) && (uint64_t)NUM2ULL(limit) < n)
        n = NUM2ULL(limit);
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++)
        rb_ary_push(r, ULL2NUM(hscope_heap_object_address(h->heap, ids[i])));
    RB_GC_GUARD(self);
    return r;
}

/* Diff#_tally(key, top, sort) -> Native::Tally whose rows list members */
static VALUE
diff_tally(VALUE self, VALUE key, VALUE top, VALUE sort)
{
    analysis_args a;
    memset(&a, 0, sizeof(a));
    rb_handle *d = hscope_rb_handle_get(self, &diff_type);
    a.diff = d->ptr;
    key = hscope_rb_tally_args(key, top, sort, &a.key, &a.topts);
    VALUE obj = hscope_rb_tally_new(self, d->heap);
    a.out = DATA_PTR(obj);
    a.what = AN_DIFF_TALLY;
    hscope_rb_run_analysis(&a);
    hscope_rb_handle_account(a.out, hscope_tally_memory(a.out->ptr));
    RB_GC_GUARD(key);
    return obj;
}

/* Diff#_write(groups, opts): the diff with groups, a Native::Tally of
 * Diff#_tally on this diff (nil: by file:line:class). */
static VALUE
diff_write(VALUE self, VALUE groups, VALUE opts)
{
    write_job j;
    hscope_rb_write_job_init(&j, W_DIFF, diff_get(self));
    if (!NIL_P(groups)) {
        rb_handle *g = hscope_rb_tally_data(groups);
        if (g->parent != self)
            rb_raise(rb_eArgError, "the groups are not of this diff");
        j.groups = g->ptr;
    }
    return hscope_rb_write_run(self, &j, opts);
}

/* ---- suspects and retained-by-key: analyses made for the writers ---- */

static HANDLE_TYPE(suspects_type, "Heapscope::Native::Suspects");
static void free_suspects(void *p) { hscope_suspects_free(p); }

static void *
suspects_nogvl(void *p)
{
    report_analysis *a = p;
    hscope_suspects_t *s = NULL;
    a->st = hscope_suspects_compute(&s, a->diff, &a->dopts, &a->err);
    a->out->ptr = s;
    return NULL;
}

/* Diff#_suspects(class_edges) -> Native::Suspects: the diff's holders,
 * ranked, with a path from a root to each (its own dominator tree). */
static VALUE
diff_suspects(VALUE self, VALUE class_edges)
{
    rb_handle *d = hscope_rb_handle_get(self, &diff_type);
    report_analysis a;
    memset(&a, 0, sizeof(a));
    a.diff = d->ptr;
    hscope_rb_dom_opts(&a.dopts, class_edges);
    VALUE obj = hscope_rb_handle_new(cSuspects, &suspects_type, free_suspects, self, d->heap);
    a.out = DATA_PTR(obj);
    hscope_rb_run_report_analysis(&a, suspects_nogvl);
    /* its own dominator tree, paths and holders */
    hscope_rb_handle_account(a.out, hscope_suspects_memory(a.out->ptr));
    return obj;
}

/* Native::Suspects#_write(opts) */
static VALUE
suspects_write(VALUE self, VALUE opts)
{
    void *s = hscope_rb_handle_get(self, &suspects_type)->ptr;
    return hscope_rb_write_handle(self, W_SUSPECTS, s, opts);
}

void
hscope_rb_init_diff(VALUE mod)
{
    cDiff = rb_define_class_under(mod, "Diff", rb_cObject);
    rb_undef_alloc_func(cDiff);
    rb_define_singleton_method(cDiff, "_compute", diff_s_compute, 6);
    rb_define_singleton_method(cDiff, "_files", diff_s_files, 7);
    rb_define_method(cDiff, "count", diff_count, 0);
    rb_define_method(cDiff, "memsize", diff_memsize, 0);
    rb_define_method(cDiff, "excluded", diff_excluded, 0);
    rb_define_method(cDiff, "_excluded_tracer", diff_excluded_tracer, 0);
    rb_define_method(cDiff, "reused_addresses", diff_reused, 0);
    rb_define_method(cDiff, "warning_bits", diff_warning_bits, 0);
    rb_define_method(cDiff, "warning_text", diff_warning_text, 0);
    rb_define_method(cDiff, "snapshot_objects", diff_snapshot_objects, 0);
    rb_define_method(cDiff, "heap", diff_heap, 0);
    rb_define_method(cDiff, "_addresses", diff_addresses, 1);
    rb_define_method(cDiff, "_tally", diff_tally, 3);
    rb_define_method(cDiff, "_write", diff_write, 2);
    rb_define_method(cDiff, "_suspects", diff_suspects, 1);

    cSuspects = rb_define_class_under(rb_define_module_under(mod, "Native"), "Suspects",
                                      rb_cObject);
    rb_undef_alloc_func(cSuspects);
    rb_define_method(cSuspects, "_write", suspects_write, 1);
}
