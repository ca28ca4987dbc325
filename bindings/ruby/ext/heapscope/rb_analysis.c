/*
 * rb_analysis.c - derived handles (tally, diff, dominator tree, ...) and the analyses
 * that make them, run without the GVL.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/thread.h>

#include <string.h>

#include "rb_heapscope.h"

/* ------------------------------------------------------------------ */
/* derived handles: tally, diff, dominator tree, paths, holders       */
/* ------------------------------------------------------------------ */

void
hscope_rb_handle_mark(void *p)
{
    rb_gc_mark_movable(((rb_handle *)p)->parent);
}

void
hscope_rb_handle_compact(void *p)
{
    rb_handle *h = p;
    h->parent = rb_gc_location(h->parent);
}

void
hscope_rb_handle_free(void *p)
{
    rb_handle *h = p;
    if (h->ptr && h->free_fn)
        h->free_fn(h->ptr);
    if (h->accounted)
        rb_gc_adjust_memory_usage(-(ssize_t)h->accounted);
    xfree(h);
}

size_t
hscope_rb_handle_memsize(const void *p)
{
    const rb_handle *h = p;
    return sizeof(*h) + h->accounted;
}

VALUE
hscope_rb_handle_new(VALUE klass, const rb_data_type_t *type, void (*free_fn)(void *),
           VALUE parent, hscope_heap_t *heap)
{
    rb_handle *h;
    VALUE obj = TypedData_Make_Struct(klass, rb_handle, type, h);
    h->free_fn = free_fn;
    h->heap = heap;
    RB_OBJ_WRITE(obj, &h->parent, parent);
    return obj;
}

rb_handle *
hscope_rb_handle_get(VALUE obj, const rb_data_type_t *type)
{
    rb_handle *h = rb_check_typeddata(obj, type);
    if (!h->ptr)
        rb_raise(hscope_rb_eError, "%s is not initialised", type->wrap_struct_name);
    return h;
}

void
hscope_rb_handle_account(rb_handle *h, uint64_t bytes)
{
    h->accounted = (size_t)bytes;
    rb_gc_adjust_memory_usage((ssize_t)h->accounted);
}

static void *
analysis_nogvl(void *p)
{
    analysis_args *a = p;
    void *res = NULL;
    if (a->load) {
        a->load->opts.progress = hscope_rb_load_progress;
        a->load->opts.progress_user_data = a->load;
    }
    switch (a->what) {
    case AN_TALLY:
        a->st = hscope_tally_compute((hscope_tally_t **)&res, a->heap, a->key, &a->topts, &a->err);
        break;
    case AN_DIFF_TALLY:
        a->st = hscope_diff_tally((hscope_tally_t **)&res, a->diff, a->key, &a->topts, &a->err);
        break;
    case AN_DOMTREE:
        a->st = hscope_domtree_compute((hscope_domtree_t **)&res, a->heap, &a->dopts, &a->err);
        break;
    case AN_PATHS:
        a->st = hscope_paths_compute((hscope_paths_t **)&res, a->heap, &a->dopts, &a->err);
        break;
    case AN_DIFF:
        a->st = hscope_diff_compute((hscope_diff_t **)&res, a->a, a->b, a->c, &a->fopts, &a->err);
        break;
    case AN_DIFF_FILES:
        a->st = hscope_diff_files((hscope_diff_t **)&res, a->pa, a->pb, a->pc,
                                  &a->load->opts, &a->fopts, &a->err);
        break;
    case AN_HOLDERS:
        a->st = hscope_holders_compute((hscope_holders_t **)&res, a->tree, a->ids, a->nids,
                                       &a->err);
        break;
    case AN_WASTE_FILE:
        a->st = hscope_waste_file((hscope_waste_t **)&res, a->pa, &a->load->opts, &a->wopts,
                                  &a->err);
        break;
    case AN_WASTE_HEAP:
        a->st = hscope_waste_compute((hscope_waste_t **)&res, a->cheap, &a->wopts, &a->err);
        break;
    case AN_TALLY_FILE:
        a->st = hscope_tally_file((hscope_tally_t **)&res, a->pa, a->key, &a->load->opts,
                                  &a->topts, &a->err);
        break;
    case AN_TIMELINE:
        a->st = hscope_timeline_compute((hscope_timeline_t **)&res, a->paths, a->npaths,
                                        &a->load->opts, &a->lopts, &a->err);
        break;
    case AN_EXPORT:
        a->st = hscope_export_files((hscope_export_t **)&res, a->paths, a->npaths, a->dir,
                                    &a->load->opts, &a->xopts, &a->err);
        break;
    case AN_HTML:
        a->st = hscope_html_report_compute((hscope_html_report_t **)&res, a->paths, a->npaths,
                                           &a->load->opts, &a->hopts, &a->err);
        break;
    default:
        a->st = HSCOPE_ERR_INTERNAL;
    }
    a->out->ptr = res;
    return NULL;
}

void
hscope_rb_run_analysis(analysis_args *a)
{
    hscope_error_init(&a->err);
    if (a->load) {
        atomic_init(&a->load->cancel, 0);
        rb_thread_call_without_gvl(analysis_nogvl, a, hscope_rb_ubf_cancel, a->load);
        if (a->load->pstate)
            rb_jump_tag(a->load->pstate);
    } else {
        rb_thread_call_without_gvl(analysis_nogvl, a, NULL, NULL);
    }
    if (a->st != HSCOPE_OK)
        hscope_rb_raise_status(a->st, &a->err);
}

static uint32_t
sort_arg(VALUE sort)
{
    if (NIL_P(sort))
        return HSCOPE_SORT_COUNT;
    ID s = SYMBOL_P(sort) ? SYM2ID(sort) : rb_intern_str(rb_String(sort));
    if (s == rb_intern("count"))
        return HSCOPE_SORT_COUNT;
    if (s == rb_intern("memsize"))
        return HSCOPE_SORT_MEMSIZE;
    rb_raise(rb_eArgError, "sort: must be :count or :memsize");
}

uint64_t
hscope_rb_top_arg(VALUE top)
{
    if (NIL_P(top))
        return 0;
    long long t = NUM2LL(top);
    if (t < 0)
        rb_raise(rb_eArgError, "top: must not be negative");
    return (uint64_t)t;
}

/* The key (returned: a frozen copy the caller keeps alive, *ckey its
 * bytes) and tally options of a _tally call. */
VALUE
hscope_rb_tally_args(VALUE key, VALUE top, VALUE sort, const char **ckey, hscope_tally_options *o)
{
    VALUE k = rb_str_new_frozen(StringValue(key));
    *ckey = StringValueCStr(k);
    hscope_tally_options_init(o);
    o->top = hscope_rb_top_arg(top);
    o->sort = sort_arg(sort);
    return k;
}

void
hscope_rb_dom_opts(hscope_dom_options *o, VALUE class_edges)
{
    hscope_dom_options_init(o);
    if (!RTEST(class_edges))
        o->flags |= HSCOPE_DOM_NO_CLASS_EDGES;
}

void
hscope_rb_run_report_analysis(report_analysis *a, void *(*fn)(void *))
{
    hscope_error_init(&a->err);
    rb_thread_call_without_gvl(fn, a, NULL, NULL);
    if (a->st != HSCOPE_OK)
        hscope_rb_raise_status(a->st, &a->err);
}

/* Run `x` (what and options set) on the dump files `paths` (an Array of
 * Strings, or nil when x->pa names the one dump) with the load options
 * `opts` (strict:, max_memory:, progress: ...): without the GVL, Ctrl-C
 * and Thread#raise stop it; the result goes into a new `klass` handle,
 * which refers to no heap. */
VALUE
hscope_rb_files_call(VALUE klass, const rb_data_type_t *type, void (*free_fn)(void *),
                     analysis_args *x, VALUE paths, VALUE opts)
{
    load_args l;
    memset(&l, 0, sizeof(l));
    VALUE keep[2] = { Qnil, Qnil };
    if (!NIL_P(paths)) {
        x->paths = hscope_rb_cstr_array(paths, keep, &x->npaths);
        for (uint64_t i = 0; i < x->npaths; i++)
            if (!x->paths[i])
                rb_raise(rb_eTypeError, "paths: nil is not a path");
    }
    hscope_rb_load_options(opts, &l.opts);
    l.progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    x->load = &l;
    VALUE obj = hscope_rb_handle_new(klass, type, free_fn, Qfalse, NULL);
    x->out = DATA_PTR(obj);
    hscope_rb_run_analysis(x);
    RB_GC_GUARD(keep[0]);
    RB_GC_GUARD(keep[1]);
    RB_GC_GUARD(l.progress);
    return obj;
}
