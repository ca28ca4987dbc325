/*
 * rb_format.c - the library's number formats for the gem's own messages
 * (Heapscope::Format): the same text as every writer and the CLI print.
 *
 * SPDX-License-Identifier: MIT
 */
#include "rb_heapscope.h"

/* Native.format_bytes(n): "512 B", "1.5 KB", "-2.0 KB" (hscope_format_bytes). */
static VALUE
format_bytes(VALUE mod, VALUE n)
{
    char buf[32];
    hscope_format_bytes((int64_t)NUM2LL(rb_to_int(n)), buf, sizeof(buf));
    return rb_utf8_str_new_cstr(buf);
}

/* Native.format_count(n): "1,234,567" (hscope_format_count), n >= 0. */
static VALUE
format_count(VALUE mod, VALUE n)
{
    char buf[32];
    VALUE i = rb_to_int(n);
    if (RTEST(rb_funcall(i, rb_intern("negative?"), 0)))
        rb_raise(rb_eRangeError, "a count must not be negative");
    hscope_format_count((uint64_t)NUM2ULL(i), buf, sizeof(buf));
    return rb_utf8_str_new_cstr(buf);
}

void
hscope_rb_init_format(VALUE mod)
{
    VALUE native = rb_define_module_under(mod, "Native");
    rb_define_singleton_method(native, "format_bytes", format_bytes, 1);
    rb_define_singleton_method(native, "format_count", format_count, 1);
}
