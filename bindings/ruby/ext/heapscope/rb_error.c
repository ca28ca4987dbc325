/*
 * rb_error.c - Heapscope::Error and one subclass per hscope_status.
 *
 * SPDX-License-Identifier: MIT
 */
#include "rb_heapscope.h"

VALUE hscope_rb_eError;
VALUE hscope_rb_eStatus[HSCOPE_ERR_INTERNAL + 1];

/* ------------------------------------------------------------------ */
/* errors                                                             */
/* ------------------------------------------------------------------ */

static VALUE
status_symbol(hscope_status st)
{
    static const char *const names[] = {
        "ok", "invalid_argument", "no_memory", "io", "parse", "not_a_dump",
        "gzip", "limit", "cancelled", "not_found", "unsupported", "truncated",
        "internal",
    };
    if (st < 0 || (size_t)st >= sizeof(names) / sizeof(names[0]))
        return ID2SYM(rb_intern("unknown"));
    return ID2SYM(rb_intern(names[st]));
}

/* Raise the Heapscope::Error subclass for `st`, carrying the library's
 * message and its details as attributes. */
void
hscope_rb_raise_status(hscope_status st, const hscope_error *err)
{
    VALUE klass = st > 0 && st <= HSCOPE_ERR_INTERNAL ? hscope_rb_eStatus[st] : hscope_rb_eError;
    const char *msg = err && err->message[0] ? err->message : hscope_status_name(st);
    VALUE exc = rb_exc_new_cstr(klass, msg);
    rb_ivar_set(exc, rb_intern("@status"), status_symbol(st));
    rb_ivar_set(exc, rb_intern("@status_name"), rb_str_new_cstr(hscope_status_name(st)));
    rb_ivar_set(exc, rb_intern("@line"), err && err->line ? ULL2NUM(err->line) : Qnil);
    rb_ivar_set(exc, rb_intern("@offset"),
                err && (err->line || err->offset) ? ULL2NUM(err->offset) : Qnil);
    rb_ivar_set(exc, rb_intern("@errno"), err && err->sys_errno ? INT2NUM(err->sys_errno) : Qnil);
    rb_exc_raise(exc);
}

static VALUE
define_error(VALUE mod, const char *name, VALUE super, hscope_status st)
{
    VALUE k = rb_define_class_under(mod, name, super);
    if (st > 0)
        hscope_rb_eStatus[st] = k;
    return k;
}

void
hscope_rb_init_error(VALUE mod)
{
    /* Errors: one class per hscope_status. */
    hscope_rb_eError = rb_define_class_under(mod, "Error", rb_eStandardError);
    VALUE e = hscope_rb_eError;
    define_error(mod, "InvalidArgumentError", e, HSCOPE_ERR_INVALID_ARG);
    define_error(mod, "OutOfMemoryError", e, HSCOPE_ERR_NOMEM);
    define_error(mod, "IOError", e, HSCOPE_ERR_IO);
    VALUE eParse = define_error(mod, "ParseError", e, HSCOPE_ERR_PARSE);
    define_error(mod, "NotADumpError", e, HSCOPE_ERR_NOT_A_DUMP);
    define_error(mod, "GzipError", e, HSCOPE_ERR_GZIP);
    define_error(mod, "LimitError", e, HSCOPE_ERR_LIMIT);
    define_error(mod, "CancelledError", e, HSCOPE_ERR_CANCELLED);
    define_error(mod, "NotFoundError", e, HSCOPE_ERR_NOT_FOUND);
    define_error(mod, "UnsupportedError", e, HSCOPE_ERR_UNSUPPORTED);
    define_error(mod, "TruncatedError", eParse, HSCOPE_ERR_TRUNCATED);
    define_error(mod, "InternalError", e, HSCOPE_ERR_INTERNAL);
}
