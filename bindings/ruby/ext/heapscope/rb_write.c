/*
 * rb_write.c - the library's writers into a String or an IO.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/thread.h>

#include <stdlib.h>
#include <string.h>

#include "rb_heapscope.h"

/* ------------------------------------------------------------------ */
/* reports: the library's writers into a String or an IO              */
/* ------------------------------------------------------------------ */

/*
 * Every to_s, inspect and report of a result is written by the library
 * (hscope_*_write), never assembled here.  The writer runs without the
 * GVL: it only reads the result, which is immutable, so other threads run
 * meanwhile and Ctrl-C stops it (the unblock function sets a flag that
 * the sink checks).  Without the GVL the sink must not touch Ruby
 * objects, so it appends to a malloc'd buffer that becomes the String
 * once the writer has returned: one copy, and no Ruby string exists (to
 * be moved or freed by the GC) while the writer runs.  With io: the
 * buffer goes to io.write every SINK_CHUNK bytes, the GVL taken for that
 * call only, so a huge output (dominators --full as JSON) never sits in
 * memory whole; an exception of io.write stops the writer and is raised
 * again once it has returned.
 */

enum { SINK_CHUNK = 64 * 1024 };

static VALUE
sink_io_write(VALUE p)
{
    rb_sink *s = (rb_sink *)p;
    rb_io_write(s->io, rb_str_new(s->buf, (long)s->len));
    s->written += s->len;
    s->len = 0;
    return Qnil;
}

static void *
sink_flush_with_gvl(void *p)
{
    rb_sink *s = p;
    rb_protect(sink_io_write, (VALUE)s, &s->state);
    return NULL;
}

static int32_t
sink_write(void *ud, const char *data, uint64_t len)
{
    rb_sink *s = ud;
    if (atomic_load(&s->cancel))
        return 1;
    if (len > (uint64_t)(LONG_MAX - s->len)) {
        s->nomem = 1;
        return 1;
    }
    if (s->len + len > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + len)
            cap = cap > (size_t)LONG_MAX / 2 ? (size_t)LONG_MAX : cap * 2;
        char *nb = realloc(s->buf, cap);
        if (!nb) {
            s->nomem = 1;
            return 1;
        }
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, (size_t)len);
    s->len += (size_t)len;
    if (!NIL_P(s->io) && s->len >= SINK_CHUNK) {
        rb_thread_call_with_gvl(sink_flush_with_gvl, s);
        if (s->state)
            return 1;
    }
    return 0;
}

static void
ubf_write(void *p)
{
    atomic_store(&((rb_sink *)p)->cancel, 1);
}

static void *
write_nogvl(void *p)
{
    write_job *j = p;
    hscope_report_options *ro = &j->ro;
    rb_sink *s = &j->sink;
    hscope_error *e = &j->err;
    switch (j->what) {
    case W_SUMMARY:
        j->st = hscope_heap_write_summary(j->handle, ro, sink_write, s, e);
        break;
    case W_OBJECTS:
        j->st = hscope_heap_write_objects(j->handle, j->items, j->nitems, NULL, ro, sink_write,
                                          s, e);
        break;
    case W_GENERATIONS:
        j->st = hscope_heap_write_generations(j->handle, ro, sink_write, s, e);
        break;
    case W_TALLY:
        j->st = hscope_tally_write(j->handle, ro, sink_write, s, e);
        break;
    case W_DIFF:
        j->st = hscope_diff_write(j->handle, j->groups, ro, sink_write, s, e);
        break;
    case W_DOMTREE:
        j->st = hscope_domtree_write(j->handle, j->focus, ro, sink_write, s, e);
        break;
    case W_RETAINED:
        j->st = hscope_domtree_write_retained(j->handle, ro, sink_write, s, e);
        break;
    case W_PATHS:
        j->st = hscope_paths_write(j->handle, j->items, j->nitems, ro, sink_write, s, e);
        break;
    case W_SUSPECTS:
        j->st = hscope_suspects_write(j->handle, ro, sink_write, s, e);
        break;
    case W_TIMELINE:
        j->st = hscope_timeline_write(j->handle, ro, sink_write, s, e);
        break;
    case W_EXPORT:
        j->st = hscope_export_write(j->handle, ro, sink_write, s, e);
        break;
    case W_HTML:
        j->st = hscope_html_report_write(j->handle, ro, sink_write, s, e);
        break;
    default:
        j->st = HSCOPE_ERR_INTERNAL;
    }
    return NULL;
}

static VALUE
ropt(VALUE opts, const char *key)
{
    return rb_hash_lookup2(opts, ID2SYM(rb_intern(key)), Qundef);
}

/* A count option: absent or nil -> 0 (the writer's default). */
static uint32_t
ropt_u32(VALUE opts, const char *key)
{
    VALUE v = ropt(opts, key);
    if (v == Qundef || NIL_P(v))
        return 0;
    long long n = NUM2LL(v);
    if (n < 0 || n > (long long)UINT32_MAX)
        rb_raise(rb_eArgError, "%s: must be an Integer from 0 to %u", key, UINT32_MAX);
    return (uint32_t)n;
}

static int32_t
format_arg(VALUE v)
{
    static const char *const names[] = { "text", "json", "csv", "dot", "svg", "folded",
                                         "html", "jsonl" };
    static const int32_t codes[] = { HSCOPE_FORMAT_TEXT, HSCOPE_FORMAT_JSON, HSCOPE_FORMAT_CSV,
                                     HSCOPE_FORMAT_DOT, HSCOPE_FORMAT_SVG, HSCOPE_FORMAT_FOLDED,
                                     HSCOPE_FORMAT_HTML, HSCOPE_FORMAT_JSONL };
    if (v == Qundef || NIL_P(v))
        return HSCOPE_FORMAT_TEXT;
    VALUE s = rb_String(SYMBOL_P(v) ? rb_sym2str(v) : v);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((size_t)RSTRING_LEN(s) == strlen(names[i]) &&
            memcmp(RSTRING_PTR(s), names[i], strlen(names[i])) == 0)
            return codes[i];
    rb_raise(rb_eArgError, "format: must be one of :text, :json, :csv, :dot, :svg, :folded, "
                           ":html, :jsonl");
}

/* The Strings of the Array `ary` (nil entries: NULL) as a C array of
 * NUL-terminated copies, kept in two Ruby strings that keep[0..1] hold (on
 * the caller's stack, so pinned while a call without the GVL reads them);
 * *n gets their number. */
const char **
hscope_rb_cstr_array(VALUE ary, VALUE *keep, uint64_t *n_out)
{
    Check_Type(ary, T_ARRAY);
    long n = RARRAY_LEN(ary);
    VALUE bytes = rb_str_buf_new(0), tmp;
    long *offs = ALLOCV_N(long, tmp, n ? n : 1); /* any number: not all on the stack */
    for (long i = 0; i < n; i++) {
        VALUE s = rb_ary_entry(ary, i); /* checked: to_str may shrink it */
        offs[i] = -1;
        if (NIL_P(s))
            continue;
        StringValueCStr(s); /* no NUL inside */
        offs[i] = RSTRING_LEN(bytes);
        rb_str_buf_cat(bytes, RSTRING_PTR(s), RSTRING_LEN(s));
        rb_str_buf_cat(bytes, "", 1);
    }
    VALUE ptrs = rb_str_buf_new(n * (long)sizeof(char *));
    const char **p = (const char **)RSTRING_PTR(ptrs);
    for (long i = 0; i < n; i++)
        p[i] = offs[i] < 0 ? NULL : RSTRING_PTR(bytes) + offs[i];
    ALLOCV_END(tmp);
    keep[0] = bytes;
    keep[1] = ptrs;
    *n_out = (uint64_t)n;
    return p;
}

/* The dump names (names: [String or nil, ...]) as a C array (hscope_rb_cstr_array). */
static void
ropt_names(VALUE opts, hscope_report_options *ro, VALUE *keep)
{
    VALUE names = ropt(opts, "names");
    if (names == Qundef || NIL_P(names))
        return;
    ro->dump_names = hscope_rb_cstr_array(names, keep, &ro->dump_name_count);
}

/* Report options from the Hash Heapscope::Report builds (lib/heapscope/
 * report.rb): format, top (nil or 0: all; absent: the writer's default),
 * width, depth, max_paths, addresses, pretty, values, ascii, bars,
 * warnings, names, io. */
static void
report_options_from(VALUE opts, hscope_report_options *ro, rb_sink *sink, VALUE *keep)
{
    Check_Type(opts, T_HASH);
    hscope_report_options_init(ro);
    ro->format = format_arg(ropt(opts, "format"));
    VALUE top = ropt(opts, "top");
    if (top != Qundef) {
        long long t = NIL_P(top) ? 0 : NUM2LL(top);
        if (t < 0)
            rb_raise(rb_eArgError, "top: must not be negative");
        ro->top = t == 0 ? HSCOPE_TOP_ALL : (uint64_t)t;
    }
    ro->width = ropt_u32(opts, "width");
    ro->depth = ropt_u32(opts, "depth");
    ro->max_paths = ropt_u32(opts, "max_paths");
    static const struct { const char *key; uint32_t flag; } flags[] = {
        { "addresses", HSCOPE_REPORT_ADDRESSES }, { "pretty", HSCOPE_REPORT_PRETTY },
        { "values", HSCOPE_REPORT_VALUES }, { "ascii", HSCOPE_REPORT_ASCII },
        { "bars", HSCOPE_REPORT_BARS }, { "skip_tracer", HSCOPE_REPORT_SKIP_TRACER },
    };
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        VALUE v = ropt(opts, flags[i].key);
        if (v != Qundef && RTEST(v))
            ro->flags |= flags[i].flag;
    }
    VALUE w = ropt(opts, "warnings");
    if (w != Qundef && !NIL_P(w) && !RTEST(w))
        ro->flags |= HSCOPE_REPORT_NO_WARNINGS;
    ropt_names(opts, ro, keep);
    VALUE io = ropt(opts, "io");
    sink->io = io == Qundef ? Qnil : io;
    if (!NIL_P(sink->io) && !rb_respond_to(sink->io, rb_intern("write")))
        rb_raise(rb_eTypeError, "io: must respond to #write");
}

static VALUE
write_str(VALUE p)
{
    rb_sink *s = (rb_sink *)p;
    return rb_utf8_str_new(s->buf, (long)s->len);
}

/* Run the writer; an interrupt that raises nothing (a trap handler ran)
 * writes again, into a String from the start. */
static VALUE
write_body(VALUE p)
{
    write_job *j = (write_job *)p;
    rb_sink *s = &j->sink;
    VALUE keep[2] = { Qnil, Qnil };
    report_options_from(j->opts, &j->ro, s, keep);
    for (;;) {
        hscope_error_init(&j->err);
        atomic_store(&s->cancel, 0);
        s->len = 0;
        rb_thread_call_without_gvl(write_nogvl, j, ubf_write, s);
        if (s->state)
            rb_jump_tag(s->state);
        if (j->st == HSCOPE_OK || !atomic_load(&s->cancel))
            break;
        rb_thread_check_ints();
        if (s->written)
            rb_raise(hscope_rb_eStatus[HSCOPE_ERR_CANCELLED], "report cancelled after %llu bytes",
                     (unsigned long long)s->written);
    }
    RB_GC_GUARD(keep[0]);
    RB_GC_GUARD(keep[1]);
    if (j->st != HSCOPE_OK) {
        if (s->nomem)
            rb_memerror();
        hscope_rb_raise_status(j->st, &j->err);
    }
    if (NIL_P(s->io))
        return write_str((VALUE)s);
    if (s->len)
        sink_io_write((VALUE)s);
    return s->io;
}

static VALUE
write_ensure(VALUE p)
{
    free(((write_job *)p)->sink.buf);
    return Qnil;
}

static VALUE
run_write(write_job *j, VALUE opts)
{
    j->opts = opts;
    j->sink.io = Qnil;
    atomic_init(&j->sink.cancel, 0);
    VALUE r = rb_ensure(write_body, (VALUE)j, write_ensure, (VALUE)j);
    RB_GC_GUARD(opts);
    return r;
}

void
hscope_rb_write_job_init(write_job *j, int what, void *handle)
{
    memset(j, 0, sizeof(*j));
    j->what = what;
    j->handle = handle;
    j->focus = HSCOPE_ID_NONE;
}

/* Run the job of `self`'s method (self, and so its handle, kept alive;
 * the other arguments are on the VM stack of the call). */
VALUE
hscope_rb_write_run(VALUE self, write_job *j, VALUE opts)
{
    VALUE r = run_write(j, opts);
    RB_GC_GUARD(self);
    return r;
}

/* A writer whose only argument is the result: `self`'s handle. */
VALUE
hscope_rb_write_handle(VALUE self, int what, void *handle, VALUE opts)
{
    write_job j;
    hscope_rb_write_job_init(&j, what, handle);
    return hscope_rb_write_run(self, &j, opts);
}

/* A writer of some objects of `heap`: addresses (W_OBJECTS: uint64_t,
 * looked up by the writer) or ids (W_PATHS: hscope_id, checked here),
 * copied into a buffer that the stack holds (pinned) while it writes. */
VALUE
hscope_rb_write_items(VALUE self, int what, void *handle, const hscope_heap_t *heap, VALUE ary,
                      VALUE opts)
{
    Check_Type(ary, T_ARRAY);
    long n = RARRAY_LEN(ary);
    int ids = what == W_PATHS;
    VALUE buf = rb_str_buf_new(n * (long)(ids ? sizeof(hscope_id) : sizeof(uint64_t)));
    for (long i = 0; i < n; i++) {
        if (ids)
            ((hscope_id *)RSTRING_PTR(buf))[i] = hscope_rb_id_arg(heap, RARRAY_AREF(ary, i));
        else
            ((uint64_t *)RSTRING_PTR(buf))[i] = NUM2ULL(RARRAY_AREF(ary, i));
    }
    write_job j;
    hscope_rb_write_job_init(&j, what, handle);
    j.items = RSTRING_PTR(buf);
    j.nitems = (uint64_t)n;
    VALUE r = hscope_rb_write_run(self, &j, opts);
    RB_GC_GUARD(buf);
    return r;
}
