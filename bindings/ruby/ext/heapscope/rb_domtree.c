/*
 * rb_domtree.c - Heapscope::DominatorTree, Native::Paths and Native::Holders.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/thread.h>

#include <string.h>

#include "rb_heapscope.h"

static VALUE cDomTree, cPaths, cHolders;

static HANDLE_TYPE(domtree_type, "Heapscope::DominatorTree");
static HANDLE_TYPE(paths_type, "Heapscope::Native::Paths");
static HANDLE_TYPE(holders_type, "Heapscope::Native::Holders");

static void free_domtree(void *p) { hscope_domtree_free(p); }
static void free_paths(void *p) { hscope_paths_free(p); }
static void free_holders(void *p) { hscope_holders_free(p); }

/* Heap#_dominators(class_edges) -> DominatorTree */
static VALUE
heap_dominators(VALUE self, VALUE class_edges)
{
    analysis_args a;
    memset(&a, 0, sizeof(a));
    a.heap = hscope_rb_heap_get(self);
    hscope_rb_dom_opts(&a.dopts, class_edges);
    VALUE obj = hscope_rb_handle_new(cDomTree, &domtree_type, free_domtree, self, a.heap);
    a.out = DATA_PTR(obj);
    a.what = AN_DOMTREE;
    hscope_rb_run_analysis(&a);
    hscope_rb_handle_account(a.out, hscope_domtree_memory(a.out->ptr));
    return obj;
}

/* Heap#_paths(class_edges) -> Native::Paths */
static VALUE
heap_paths(VALUE self, VALUE class_edges)
{
    analysis_args a;
    memset(&a, 0, sizeof(a));
    a.heap = hscope_rb_heap_get(self);
    hscope_rb_dom_opts(&a.dopts, class_edges);
    VALUE obj = hscope_rb_handle_new(cPaths, &paths_type, free_paths, self, a.heap);
    a.out = DATA_PTR(obj);
    a.what = AN_PATHS;
    hscope_rb_run_analysis(&a);
    hscope_rb_handle_account(a.out, hscope_paths_memory(a.out->ptr));
    return obj;
}

/* ---- holders ---- */

static VALUE
holders_rows(VALUE hobj, const hscope_heap_t *heap)
{
    rb_handle *h = hscope_rb_handle_get(hobj, &holders_type);
    uint64_t n = hscope_holders_count(h->ptr);
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++) {
        hscope_id id;
        int32_t cat = -1;
        uint64_t cnt = 0, mem = 0;
        hscope_holders_get(h->ptr, i, &id, &cat, &cnt, &mem);
        rb_ary_push(r, rb_ary_new_from_args(4, id == HSCOPE_ID_NONE ? Qnil : UINT2NUM(id),
                                            id == HSCOPE_ID_NONE ? hscope_rb_root_name(heap, cat)
                                                                 : Qnil,
                                            ULL2NUM(cnt), ULL2NUM(mem)));
    }
    return r;
}

/* DominatorTree#_holders(ids) -> [[holder id or nil, root category or nil,
 * count, memsize], ...]: who holds the objects `ids` */
static VALUE
domtree_holders(VALUE self, VALUE ary)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    Check_Type(ary, T_ARRAY);
    long n = RARRAY_LEN(ary);
    uint64_t count = hscope_heap_object_count(t->heap);
    VALUE buf = rb_str_buf_new(n * (long)sizeof(hscope_id));
    hscope_id *ids = (hscope_id *)RSTRING_PTR(buf);
    for (long i = 0; i < n; i++) {
        unsigned long long id = NUM2ULL(rb_ary_entry(ary, i));
        if (id >= count)
            rb_raise(rb_eIndexError, "object id %llu out of range", id);
        ids[i] = (hscope_id)id;
    }
    analysis_args a;
    memset(&a, 0, sizeof(a));
    a.tree = t->ptr;
    a.ids = ids;
    a.nids = (uint64_t)n;
    VALUE hobj = hscope_rb_handle_new(cHolders, &holders_type, free_holders, self, t->heap);
    a.out = DATA_PTR(hobj);
    a.what = AN_HOLDERS;
    hscope_rb_run_analysis(&a);
    VALUE r = holders_rows(hobj, t->heap);
    RB_GC_GUARD(buf);
    RB_GC_GUARD(hobj);
    return r;
}

/* ---- DominatorTree ---- */

static hscope_domtree_t *
tree_get(VALUE self)
{
    return hscope_rb_handle_get(self, &domtree_type)->ptr;
}

static VALUE
domtree_heap(VALUE self)
{
    return hscope_rb_handle_get(self, &domtree_type)->parent;
}

/* DominatorTree#_top(n) -> ids, largest retained size first */
static VALUE
domtree_top(VALUE self, VALUE vn)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    uint64_t n = hscope_rb_top_arg(vn);
    uint64_t cnt = hscope_heap_object_count(t->heap);
    if (n > cnt)
        n = cnt;
    VALUE tmp;
    hscope_id *buf = ALLOCV_N(hscope_id, tmp, n ? n : 1);
    uint64_t got = hscope_domtree_top(t->ptr, buf, n);
    VALUE r = hscope_rb_ids_to_ary(buf, got);
    ALLOCV_END(tmp);
    return r;
}

/* DominatorTree#_retained(id) -> [bytes, objects] or nil if unreachable */
static VALUE
domtree_retained(VALUE self, VALUE vid)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    hscope_id id = hscope_rb_id_arg(t->heap, vid);
    if (!hscope_domtree_reachable(t->ptr, id))
        return Qnil;
    return rb_assoc_new(ULL2NUM(hscope_domtree_retained(t->ptr, id)),
                        ULL2NUM(hscope_domtree_retained_count(t->ptr, id)));
}

/* DominatorTree#_idom(id) -> [id or nil, root category or nil] or nil */
static VALUE
domtree_idom(VALUE self, VALUE vid)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    hscope_id idom;
    int32_t cat = -1;
    if (hscope_domtree_idom(t->ptr, hscope_rb_id_arg(t->heap, vid), &idom, &cat) != HSCOPE_OK)
        return Qnil;
    if (idom != HSCOPE_ID_NONE)
        return rb_assoc_new(UINT2NUM(idom), Qnil);
    return rb_assoc_new(Qnil, hscope_rb_root_name(t->heap, cat));
}

/* DominatorTree#_chain(id) -> [root category or nil, ids top-down] or nil */
static VALUE
domtree_chain(VALUE self, VALUE vid)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    hscope_id id = hscope_rb_id_arg(t->heap, vid);
    uint64_t len = hscope_domtree_chain(t->ptr, id, NULL, 0, NULL);
    if (!len)
        return Qnil;
    VALUE tmp;
    hscope_id *buf = ALLOCV_N(hscope_id, tmp, len);
    int32_t cat = -1;
    len = hscope_domtree_chain(t->ptr, id, buf, len, &cat);
    VALUE r = rb_assoc_new(hscope_rb_root_name(t->heap, cat), hscope_rb_ids_to_ary(buf, len));
    ALLOCV_END(tmp);
    return r;
}

/* DominatorTree#_children(id or nil, root category index) -> ids */
static VALUE
domtree_children(VALUE self, VALUE vid, VALUE vcat)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    hscope_id id = NIL_P(vid) ? HSCOPE_ID_NONE : hscope_rb_id_arg(t->heap, vid);
    const hscope_id *kids;
    uint64_t n;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_domtree_children(t->ptr, id, NUM2INT(vcat), &kids, &n, &err);
    if (st != HSCOPE_OK)
        hscope_rb_raise_status(st, &err);
    return hscope_rb_ids_to_ary(kids, n);
}

/* DominatorTree#_unreachable(limit) -> ids */
static VALUE
domtree_unreachable(VALUE self, VALUE limit)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    const hscope_id *ids;
    uint64_t n;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_domtree_unreachable(t->ptr, &ids, &n, &err);
    if (st != HSCOPE_OK)
        hscope_rb_raise_status(st, &err);
    if (!NIL_P(limit) && (uint64_t)NUM2ULL(limit) < n)
        n = NUM2ULL(limit);
    return hscope_rb_ids_to_ary(ids, n);
}

/* DominatorTree#_totals -> [reachable, reachable memsize, unreachable,
 * unreachable memsize] */
static VALUE
domtree_totals(VALUE self)
{
    uint64_t r = 0, rm = 0, u = 0, um = 0;
    hscope_domtree_totals(tree_get(self), &r, &rm, &u, &um);
    return rb_ary_new_from_args(4, ULL2NUM(r), ULL2NUM(rm), ULL2NUM(u), ULL2NUM(um));
}

/* ---- Paths ---- */

/* Paths#_path(id) -> [root category or nil, ids from the root down to
 * id] or nil when unreachable */
static VALUE
paths_path(VALUE self, VALUE vid)
{
    rb_handle *p = hscope_rb_handle_get(self, &paths_type);
    hscope_id id = hscope_rb_id_arg(p->heap, vid);
    uint64_t len = hscope_paths_get(p->ptr, id, NULL, 0, NULL);
    if (!len)
        return Qnil;
    VALUE tmp;
    hscope_id *buf = ALLOCV_N(hscope_id, tmp, len);
    int32_t cat = -1;
    len = hscope_paths_get(p->ptr, id, buf, len, &cat);
    VALUE r = rb_assoc_new(hscope_rb_root_name(p->heap, cat), hscope_rb_ids_to_ary(buf, len));
    ALLOCV_END(tmp);
    return r;
}

/* DominatorTree#_write(focus id or nil, opts) */
static VALUE
domtree_write(VALUE self, VALUE focus, VALUE opts)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    write_job j;
    hscope_rb_write_job_init(&j, W_DOMTREE, t->ptr);
    if (!NIL_P(focus))
        j.focus = hscope_rb_id_arg(t->heap, focus);
    return hscope_rb_write_run(self, &j, opts);
}

/* DominatorTree#_write_retained(opts) */
static VALUE
domtree_write_retained(VALUE self, VALUE opts)
{
    return hscope_rb_write_handle(self, W_RETAINED, tree_get(self), opts);
}

/* Native::Paths#_write(ids, opts): root paths to the objects. */
static VALUE
paths_write(VALUE self, VALUE ids, VALUE opts)
{
    rb_handle *p = hscope_rb_handle_get(self, &paths_type);
    return hscope_rb_write_items(self, W_PATHS, p->ptr, p->heap, ids, opts);
}

static void *
domtree_tally_nogvl(void *p)
{
    report_analysis *a = p;
    hscope_tally_t *t = NULL;
    a->st = hscope_domtree_tally(&t, a->tree, a->key, &a->topts, &a->err);
    a->out->ptr = t;
    return NULL;
}

/* DominatorTree#_tally(key, top, sort, keep_tracer) -> Native::Tally: what
 * each group keeps alive (hscope_domtree_tally). */
static VALUE
domtree_tally(VALUE self, VALUE key, VALUE top, VALUE sort, VALUE keep_tracer)
{
    rb_handle *t = hscope_rb_handle_get(self, &domtree_type);
    report_analysis a;
    memset(&a, 0, sizeof(a));
    a.tree = t->ptr;
    key = hscope_rb_tally_args(key, top, sort, &a.key, &a.topts);
    if (!RTEST(keep_tracer))
        a.topts.flags |= HSCOPE_TALLY_SKIP_TRACER;
    VALUE obj = hscope_rb_tally_new(self, t->heap);
    a.out = DATA_PTR(obj);
    hscope_rb_run_report_analysis(&a, domtree_tally_nogvl);
    hscope_rb_handle_account(a.out, hscope_tally_memory(a.out->ptr));
    RB_GC_GUARD(key);
    return obj;
}

void
hscope_rb_init_domtree(VALUE mod)
{
    VALUE native = rb_define_module_under(mod, "Native");
    rb_define_method(hscope_rb_cHeap, "_dominators", heap_dominators, 1);
    rb_define_method(hscope_rb_cHeap, "_paths", heap_paths, 1);

    cDomTree = rb_define_class_under(mod, "DominatorTree", rb_cObject);
    rb_undef_alloc_func(cDomTree);
    rb_define_method(cDomTree, "heap", domtree_heap, 0);
    rb_define_method(cDomTree, "_totals", domtree_totals, 0);
    rb_define_method(cDomTree, "_top", domtree_top, 1);
    rb_define_method(cDomTree, "_retained", domtree_retained, 1);
    rb_define_method(cDomTree, "_idom", domtree_idom, 1);
    rb_define_method(cDomTree, "_chain", domtree_chain, 1);
    rb_define_method(cDomTree, "_children", domtree_children, 2);
    rb_define_method(cDomTree, "_unreachable", domtree_unreachable, 1);
    rb_define_method(cDomTree, "_holders", domtree_holders, 1);
    rb_define_method(cDomTree, "_write", domtree_write, 2);
    rb_define_method(cDomTree, "_write_retained", domtree_write_retained, 1);
    rb_define_method(cDomTree, "_tally", domtree_tally, 4);

    cPaths = rb_define_class_under(native, "Paths", rb_cObject);
    rb_undef_alloc_func(cPaths);
    rb_define_method(cPaths, "_path", paths_path, 1);
    rb_define_method(cPaths, "_write", paths_write, 2);

    cHolders = rb_define_class_under(native, "Holders", rb_cObject);
    rb_undef_alloc_func(cHolders);
}
