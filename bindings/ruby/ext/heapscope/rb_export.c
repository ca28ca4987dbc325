/*
 * rb_export.c - Heapscope::Export: dumps written as tables for PostgreSQL and DuckDB.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "rb_heapscope.h"

static VALUE cExport;

static HANDLE_TYPE(export_type, "Heapscope::Export");

static void free_export(void *p) { hscope_export_free(p); }

/* Export._files(paths, dir, load_opts, format, order, first_id): format
 * and order are the library's codes; first_id nil for 1. */
static VALUE
export_s_files(int argc, VALUE *argv, VALUE klass)
{
    VALUE paths, dir, opts, format, order, first_id;
    rb_scan_args(argc, argv, "6", &paths, &dir, &opts, &format, &order, &first_id);
    analysis_args x;
    memset(&x, 0, sizeof(x));
    FilePathValue(dir);
    dir = rb_str_new_frozen(dir);
    x.dir = StringValueCStr(dir);
    hscope_export_options_init(&x.xopts);
    x.xopts.format = NUM2INT(format);
    x.xopts.order = NUM2INT(order);
    x.xopts.first_id = NIL_P(first_id) ? 0 : NUM2ULL(first_id);
    x.what = AN_EXPORT;
    VALUE obj = hscope_rb_files_call(klass, &export_type, free_export, &x, paths, opts);
    RB_GC_GUARD(dir);
    return obj;
}

static const hscope_export_t *
export_get(VALUE self)
{
    return hscope_rb_handle_get(self, &export_type)->ptr;
}

static VALUE
export_dump_count(VALUE self)
{
    return ULL2NUM(hscope_export_dump_count(export_get(self)));
}

/* Export#_dump_path(i) -> the path of dump i (time order), or nil */
static VALUE
export_dump_path(VALUE self, VALUE vi)
{
    VALUE r = hscope_rb_cstr_or_nil(hscope_export_dump_path(export_get(self), NUM2ULL(vi)));
    RB_GC_GUARD(self);
    return r;
}

/* Export#_totals -> [objects, references] written */
static VALUE
export_totals(VALUE self)
{
    uint64_t o = 0, r = 0;
    hscope_export_totals(export_get(self), &o, &r);
    return rb_assoc_new(ULL2NUM(o), ULL2NUM(r));
}

/* Export#_write(opts) */
static VALUE
export_write(VALUE self, VALUE opts)
{
    return hscope_rb_write_handle(self, W_EXPORT, (void *)export_get(self), opts);
}

void
hscope_rb_init_export(VALUE mod)
{
    cExport = rb_define_class_under(mod, "Export", rb_cObject);
    rb_undef_alloc_func(cExport);
    rb_define_singleton_method(cExport, "_files", export_s_files, -1);
    rb_define_method(cExport, "dump_count", export_dump_count, 0);
    rb_define_method(cExport, "_dump_path", export_dump_path, 1);
    rb_define_method(cExport, "_totals", export_totals, 0);
    rb_define_method(cExport, "_write", export_write, 1);
}
