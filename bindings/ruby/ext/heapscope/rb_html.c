/*
 * rb_html.c - Native::HtmlReport: the HTML report of many dumps.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "rb_heapscope.h"

/* ------------------------------------------------------------------ */
/* the HTML report                                                    */
/* ------------------------------------------------------------------ */

/*
 * Heapscope.report: hscope_html_report_compute() on the dump files (without
 * the GVL, as a timeline; Ctrl-C stops its loads and folds), then the page
 * by hscope_html_report_write() through the write job's sink (a String or
 * io:), then the report freed at once: it holds the last dump's heap.
 */
static HANDLE_TYPE(html_type, "Heapscope::Native::HtmlReport");
static void free_html(void *p) { hscope_html_report_free(p); }
static VALUE cHtmlReport;

/* Native::HtmlReport._compute(paths, load_opts, by, order, flags, title):
 * order and flags the library's codes (HSCOPE_ORDER_*, HSCOPE_HTML_*); by
 * and title nil for the defaults. */
static VALUE
html_s_compute(VALUE klass, VALUE paths, VALUE opts, VALUE by, VALUE order, VALUE flags,
               VALUE title)
{
    analysis_args x;
    memset(&x, 0, sizeof(x));
    hscope_html_options_init(&x.hopts);
    if (!NIL_P(by)) {
        by = rb_str_new_frozen(StringValue(by));
        x.hopts.by = StringValueCStr(by);
    }
    if (!NIL_P(title)) {
        title = rb_str_new_frozen(StringValue(title));
        x.hopts.title = StringValueCStr(title);
    }
    x.hopts.order = NUM2INT(order);
    x.hopts.flags = NUM2UINT(flags);
    if (!NIL_P(opts) && !NIL_P(rb_hash_lookup(opts, ID2SYM(rb_intern("progress")))))
        rb_raise(rb_eArgError, "progress: the report's dumps are read on several threads; "
                               "give no progress proc");
    x.what = AN_HTML;
    VALUE obj = hscope_rb_files_call(klass, &html_type, free_html, &x, paths, opts);
    RB_GC_GUARD(by);
    RB_GC_GUARD(title);
    return obj;
}

/* HtmlReport#_write(opts): the page (opts: format: :html, top:, io:). */
static VALUE
html_write(VALUE self, VALUE opts)
{
    return hscope_rb_write_handle(self, W_HTML, hscope_rb_handle_get(self, &html_type)->ptr, opts);
}

/* HtmlReport#_free: the report's memory back now, not at the next GC. */
static VALUE
html_free(VALUE self)
{
    rb_handle *h = rb_check_typeddata(self, &html_type);
    hscope_html_report_free(h->ptr);
    h->ptr = NULL;
    return Qnil;
}

void
hscope_rb_init_html(VALUE mod)
{
    VALUE native = rb_define_module_under(mod, "Native");
    cHtmlReport = rb_define_class_under(native, "HtmlReport", rb_cObject);
    rb_undef_alloc_func(cHtmlReport);
    rb_define_singleton_method(cHtmlReport, "_compute", html_s_compute, 6);
    rb_define_method(cHtmlReport, "_write", html_write, 1);
    rb_define_method(cHtmlReport, "_free", html_free, 0);
}
