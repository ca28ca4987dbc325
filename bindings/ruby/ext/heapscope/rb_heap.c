/*
 * rb_heap.c - Heapscope::Heap: the handle, its accessors and writers.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/thread.h>

#include <string.h>

#include "rb_heapscope.h"

VALUE hscope_rb_cHeap;

/* ------------------------------------------------------------------ */
/* Heap                                                               */
/* ------------------------------------------------------------------ */

static void
heap_mark(void *p)
{
    rb_gc_mark_movable(((rb_heap *)p)->owner);
}

static void
heap_compact(void *p)
{
    rb_heap *h = p;
    h->owner = rb_gc_location(h->owner);
}

static void
heap_free(void *p)
{
    rb_heap *h = p;
    if (!RTEST(h->owner))
        hscope_heap_free(h->heap);
    if (h->accounted)
        rb_gc_adjust_memory_usage(-(ssize_t)h->accounted);
    xfree(h);
}

static size_t
heap_memsize(const void *p)
{
    const rb_heap *h = p;
    return sizeof(*h) + h->accounted;
}

static const rb_data_type_t heap_type = {
    "Heapscope::Heap",
    { heap_mark, heap_free, heap_memsize, heap_compact, { 0 } },
    0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

VALUE
hscope_rb_heap_alloc(VALUE klass)
{
    rb_heap *h;
    VALUE obj = TypedData_Make_Struct(klass, rb_heap, &heap_type, h);
    h->owner = Qfalse;
    return obj;
}

rb_heap *
hscope_rb_heap_data(VALUE obj)
{
    return rb_check_typeddata(obj, &heap_type);
}

hscope_heap_t *
hscope_rb_heap_get(VALUE obj)
{
    rb_heap *h = hscope_rb_heap_data(obj);
    if (!h->heap)
        rb_raise(hscope_rb_eError, "heap is not loaded");
    return h->heap;
}

/* Report the heap's model + index memory to the GC, once. */
void
hscope_rb_heap_account(rb_heap *h)
{
    hscope_load_stats s;
    hscope_load_stats_init(&s);
    if (!h->heap || h->accounted || hscope_heap_stats(h->heap, &s) != HSCOPE_OK)
        return;
    h->accounted = (size_t)(s.model_bytes + s.index_bytes);
    rb_gc_adjust_memory_usage((ssize_t)h->accounted);
}

/* ------------------------------------------------------------------ */
/* Heap accessors                                                     */
/* ------------------------------------------------------------------ */

hscope_id
hscope_rb_id_arg(const hscope_heap_t *h, VALUE v)
{
    unsigned long long id = NUM2ULL(v);
    if (id >= hscope_heap_object_count(h))
        rb_raise(rb_eIndexError, "object id %llu out of range", id);
    return (hscope_id)id;
}

VALUE
hscope_rb_cstr_or_nil(const char *s)
{
    return s ? rb_utf8_str_new_cstr(s) : Qnil;
}

static VALUE
heap_object_count(VALUE self)
{
    return ULL2NUM(hscope_heap_object_count(hscope_rb_heap_get(self)));
}

static VALUE
heap_reference_count(VALUE self)
{
    return ULL2NUM(hscope_heap_reference_count(hscope_rb_heap_get(self)));
}

static VALUE
heap_dangling_count(VALUE self)
{
    return ULL2NUM(hscope_heap_dangling_count(hscope_rb_heap_get(self)));
}

#define STAT(name) rb_hash_aset(r, ID2SYM(rb_intern(#name)), ULL2NUM(s.name))

/* Heap#stats: the library's load statistics (hscope_load_stats). */
static VALUE
heap_stats(VALUE self)
{
    hscope_load_stats s;
    hscope_load_stats_init(&s);
    hscope_status st = hscope_heap_stats(hscope_rb_heap_get(self), &s);
    if (st != HSCOPE_OK)
        hscope_rb_raise_status(st, NULL);
    VALUE r = rb_hash_new();
    rb_hash_aset(r, ID2SYM(rb_intern("gzip")), s.gzip ? Qtrue : Qfalse);
    STAT(input_bytes);
    STAT(bytes);
    STAT(lines);
    STAT(objects);
    STAT(references);
    STAT(root_records);
    STAT(root_references);
    STAT(shapes);
    STAT(free_slots);
    STAT(dangling_references);
    STAT(dangling_addresses);
    STAT(duplicate_addresses);
    STAT(skipped_lines);
    STAT(unknown_keys);
    STAT(unknown_types);
    rb_hash_aset(r, ID2SYM(rb_intern("truncated")), s.truncated ? Qtrue : Qfalse);
    STAT(load_ns);
    STAT(model_bytes);
    STAT(index_bytes);
    STAT(total_memsize);
    return r;
}

/* Heap#skipped: { "bad_json" => 3, ... } for every reason that occurred. */
static VALUE
heap_skipped(VALUE self)
{
    hscope_heap_t *h = hscope_rb_heap_get(self);
    VALUE r = rb_hash_new();
    for (int32_t i = 0; i < HSCOPE_SKIP__COUNT; i++) {
        uint64_t n = hscope_heap_skipped(h, i);
        if (n)
            rb_hash_aset(r, rb_str_new_cstr(hscope_skip_reason_name(i)), ULL2NUM(n));
    }
    return r;
}

/* Heap#skipped_lines: [[line, "reason"], ...] (the first few). */
static VALUE
heap_skipped_lines(VALUE self)
{
    hscope_heap_t *h = hscope_rb_heap_get(self);
    VALUE r = rb_ary_new();
    for (uint32_t i = 0;; i++) {
        int32_t reason = 0;
        uint64_t line = hscope_heap_skipped_line(h, i, &reason);
        if (!line)
            break;
        rb_ary_push(r, rb_assoc_new(ULL2NUM(line),
                                    rb_str_new_cstr(hscope_skip_reason_name(reason))));
    }
    return r;
}

/* Heap#_roots: [[name, records, targets, dangling], ...] */
static VALUE
heap_roots(VALUE self)
{
    hscope_heap_t *h = hscope_rb_heap_get(self);
    uint32_t n = hscope_heap_root_category_count(h);
    VALUE r = rb_ary_new_capa(n);
    for (uint32_t i = 0; i < n; i++) {
        const hscope_id *t;
        uint64_t cnt = 0, dang = 0;
        hscope_heap_root_targets(h, i, &t, &cnt, &dang);
        VALUE name = hscope_rb_cstr_or_nil(hscope_heap_root_category_name(h, i));
        rb_ary_push(r, rb_ary_new_from_args(4, name,
                                            ULL2NUM(hscope_heap_root_category_records(h, i)),
                                            ULL2NUM(cnt), ULL2NUM(dang)));
    }
    return r;
}

VALUE
hscope_rb_root_name(const hscope_heap_t *h, int32_t cat)
{
    if (cat < 0)
        return Qnil;
    return hscope_rb_cstr_or_nil(hscope_heap_root_category_name(h, (uint32_t)cat));
}

/* Heap#_find(address) -> id or nil */
static VALUE
heap_find(VALUE self, VALUE addr)
{
    hscope_id id;
    if (hscope_heap_find(hscope_rb_heap_get(self), NUM2ULL(addr), &id) != HSCOPE_OK)
        return Qnil;
    return UINT2NUM(id);
}

static VALUE
heap_address(VALUE self, VALUE id)
{
    hscope_heap_t *h = hscope_rb_heap_get(self);
    return ULL2NUM(hscope_heap_object_address(h, hscope_rb_id_arg(h, id)));
}

/* Heap#_info(id) -> [address, type, class_label, detail, memsize, size,
 *                    generation, file, line, method, flags, class_address,
 *                    label] (label: hscope_heap_object_label, the name an
 *                    object goes by in every output) */
static VALUE
heap_info(VALUE self, VALUE vid)
{
    hscope_heap_t *h = hscope_rb_heap_get(self);
    hscope_id id = hscope_rb_id_arg(h, vid);
    int64_t gen = hscope_heap_object_generation(h, id);
    uint32_t line = hscope_heap_object_line(h, id);
    VALUE v[13] = {
        ULL2NUM(hscope_heap_object_address(h, id)),
        rb_str_new_cstr(hscope_heap_type_name(h, hscope_heap_object_type(h, id))),
        hscope_rb_cstr_or_nil(hscope_heap_object_class_label(h, id)),
        hscope_rb_cstr_or_nil(hscope_heap_object_detail(h, id)),
        ULL2NUM(hscope_heap_object_memsize(h, id)),
        ULL2NUM(hscope_heap_object_size(h, id)),
        gen < 0 ? Qnil : LL2NUM(gen),
        hscope_rb_cstr_or_nil(hscope_heap_object_file(h, id)),
        line ? UINT2NUM(line) : Qnil,
        hscope_rb_cstr_or_nil(hscope_heap_object_method(h, id)),
        UINT2NUM(hscope_heap_object_flags(h, id)),
        ULL2NUM(hscope_heap_object_class_address(h, id)),
        hscope_rb_cstr_or_nil(hscope_heap_object_label(h, id)),
    };
    return rb_ary_new_from_values(13, v);
}

VALUE
hscope_rb_ids_to_ary(const hscope_id *ids, uint64_t n)
{
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++)
        rb_ary_push(r, UINT2NUM(ids[i]));
    return r;
}

/* Heap#_refs(id) -> [ids], in dump order, with duplicates */
static VALUE
heap_refs(VALUE self, VALUE vid)
{
    hscope_heap_t *h = hscope_rb_heap_get(self);
    const hscope_id *t;
    uint64_t n;
    hscope_status st = hscope_heap_object_references(h, hscope_rb_id_arg(h, vid), &t, &n);
    if (st != HSCOPE_OK)
        hscope_rb_raise_status(st, NULL);
    return hscope_rb_ids_to_ary(t, n);
}

typedef struct referrers_args {
    hscope_heap_t *h;
    hscope_id id;
    const hscope_id *src;
    uint64_t n;
    hscope_error err;
    hscope_status st;
} referrers_args;

static void *
referrers_nogvl(void *p)
{
    referrers_args *a = p;
    a->st = hscope_heap_object_referrers(a->h, a->id, &a->src, &a->n, &a->err);
    return NULL;
}

/* Heap#_referrers(id) -> [ids]; the first call builds the reverse index
 * (linear in the heap), without the GVL. */
static VALUE
heap_referrers(VALUE self, VALUE vid)
{
    referrers_args a;
    memset(&a, 0, sizeof(a));
    a.h = hscope_rb_heap_get(self);
    a.id = hscope_rb_id_arg(a.h, vid);
    hscope_error_init(&a.err);
    rb_thread_call_without_gvl(referrers_nogvl, &a, NULL, NULL);
    if (a.st != HSCOPE_OK)
        hscope_rb_raise_status(a.st, &a.err);
    VALUE r = hscope_rb_ids_to_ary(a.src, a.n);
    RB_GC_GUARD(self);
    return r;
}

/* Heap#_value(id) -> String (ASCII-8BIT) or nil; needs values: true */
static VALUE
heap_value(VALUE self, VALUE vid)
{
    hscope_heap_t *h = hscope_rb_heap_get(self);
    const char *d;
    uint64_t n;
    if (hscope_heap_object_value(h, hscope_rb_id_arg(h, vid), &d, &n) != HSCOPE_OK)
        return Qnil;
    return rb_str_new(d, (long)n);
}

/* Heap#_column(code) -> [packed String, element size] (a copy). */
static VALUE
heap_column(VALUE self, VALUE code)
{
    const void *data;
    uint64_t len;
    int32_t et;
    hscope_heap_t *h = hscope_rb_heap_get(self);
    hscope_status st = hscope_heap_column(h, NUM2INT(code), &data, &len, &et);
    if (st != HSCOPE_OK)
        hscope_rb_raise_status(st, NULL);
    long es = et == HSCOPE_ELEM_U8 ? 1 : et == HSCOPE_ELEM_U16 ? 2 : et == HSCOPE_ELEM_U32 ? 4 : 8;
    if (len > (uint64_t)LONG_MAX / (uint64_t)es)
        rb_raise(rb_eRangeError, "column too large");
    VALUE s = rb_str_new(data, (long)len * es);
    RB_GC_GUARD(self);
    return rb_assoc_new(s, LONG2NUM(es));
}

static VALUE
heap_type_name(VALUE self, VALUE code)
{
    return rb_str_new_cstr(hscope_heap_type_name(hscope_rb_heap_get(self), NUM2INT(code)));
}

/* Heap#_write_summary(opts) -> String (or the io: given) */
static VALUE
heap_write_summary(VALUE self, VALUE opts)
{
    return hscope_rb_write_handle(self, W_SUMMARY, hscope_rb_heap_get(self), opts);
}

/* Heap#_write_generations(opts) */
static VALUE
heap_write_generations(VALUE self, VALUE opts)
{
    return hscope_rb_write_handle(self, W_GENERATIONS, hscope_rb_heap_get(self), opts);
}

/* Heap#_write_objects(addresses, opts): show; an address that is not an
 * object of the heap is written as not found. */
static VALUE
heap_write_objects(VALUE self, VALUE addrs, VALUE opts)
{
    hscope_heap_t *h = hscope_rb_heap_get(self);
    return hscope_rb_write_items(self, W_OBJECTS, h, h, addrs, opts);
}

void
hscope_rb_init_heap(VALUE mod)
{
    VALUE c = hscope_rb_cHeap = rb_define_class_under(mod, "Heap", rb_cObject);
    rb_undef_alloc_func(c);
    rb_define_method(c, "object_count", heap_object_count, 0);
    rb_define_method(c, "reference_count", heap_reference_count, 0);
    rb_define_method(c, "dangling_count", heap_dangling_count, 0);
    rb_define_method(c, "stats", heap_stats, 0);
    rb_define_method(c, "skipped", heap_skipped, 0);
    rb_define_method(c, "skipped_lines", heap_skipped_lines, 0);
    rb_define_method(c, "_roots", heap_roots, 0);
    rb_define_method(c, "_find", heap_find, 1);
    rb_define_method(c, "_address", heap_address, 1);
    rb_define_method(c, "_info", heap_info, 1);
    rb_define_method(c, "_refs", heap_refs, 1);
    rb_define_method(c, "_referrers", heap_referrers, 1);
    rb_define_method(c, "_value", heap_value, 1);
    rb_define_method(c, "_column", heap_column, 1);
    rb_define_method(c, "_type_name", heap_type_name, 1);
    rb_define_method(c, "_write_summary", heap_write_summary, 1);
    rb_define_method(c, "_write_generations", heap_write_generations, 1);
    rb_define_method(c, "_write_objects", heap_write_objects, 2);
}
