/*
 * rb_load.c - loading a Heap from a file, an IO or a String, without the GVL.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/io.h>
#include <ruby/thread.h>

#include <fcntl.h>
#include <string.h>

#include "rb_heapscope.h"

/* ------------------------------------------------------------------ */
/* load options                                                       */
/* ------------------------------------------------------------------ */

static uint64_t
opt_u64(VALUE opts, const char *key)
{
    VALUE v = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern(key)));
    if (NIL_P(v))
        return 0;
    if (rb_num2dbl(v) < 0)
        rb_raise(rb_eArgError, "%s must not be negative", key);
    return NUM2ULL(v);
}

static int
opt_bool(VALUE opts, const char *key, int dflt)
{
    VALUE v = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern(key)));
    return NIL_P(v) ? dflt : RTEST(v);
}

void
hscope_rb_load_options(VALUE opts, hscope_load_options *o)
{
    hscope_load_options_init(o);
    if (!NIL_P(opts))
        Check_Type(opts, T_HASH);
    if (opt_bool(opts, "strict", 0))
        o->flags |= HSCOPE_LOAD_STRICT;
    if (opt_bool(opts, "values", 0))
        o->flags |= HSCOPE_LOAD_VALUES;
    if (!opt_bool(opts, "gzip", 1))
        o->flags |= HSCOPE_LOAD_NO_GZIP;
    o->max_line_bytes = opt_u64(opts, "max_line_bytes");
    o->max_memory = opt_u64(opts, "max_memory");
    o->max_objects = opt_u64(opts, "max_objects");
    o->max_references = opt_u64(opts, "max_references");
}

/* ------------------------------------------------------------------ */
/* loading without the GVL                                            */
/* ------------------------------------------------------------------ */

enum { SRC_PATH, SRC_FD, SRC_MEM };

void
hscope_rb_ubf_cancel(void *p)
{
    atomic_store(&((load_args *)p)->cancel, 1);
}

static VALUE
progress_call(VALUE p)
{
    load_args *a = (load_args *)p;
    return rb_funcall(a->progress, rb_intern("call"), 2, ULL2NUM(a->done),
                      a->total ? ULL2NUM(a->total) : Qnil);
}

static void *
progress_with_gvl(void *p)
{
    load_args *a = p;
    VALUE r = rb_protect(progress_call, (VALUE)a, &a->pstate);
    if (!a->pstate && SYMBOL_P(r) && SYM2ID(r) == rb_intern("cancel"))
        a->pstop = 1;
    return NULL;
}

int32_t
hscope_rb_load_progress(void *ud, uint64_t done, uint64_t total)
{
    load_args *a = ud;
    if (atomic_load(&a->cancel))
        return 1;
    if (!NIL_P(a->progress)) {
        a->done = done;
        a->total = total;
        rb_thread_call_with_gvl(progress_with_gvl, a);
        if (a->pstate || a->pstop)
            return 1;
    }
    return atomic_load(&a->cancel);
}

static void *
load_nogvl(void *p)
{
    load_args *a = p;
    hscope_heap_t *h = NULL;
    a->opts.progress = hscope_rb_load_progress;
    a->opts.progress_user_data = a;
    if (atomic_load(&a->cancel)) {
        a->st = HSCOPE_ERR_CANCELLED;
        snprintf(a->err.message, sizeof(a->err.message), "load cancelled");
        return NULL;
    }
    switch (a->kind) {
    case SRC_PATH:
        a->st = hscope_heap_open_file(&h, a->path, &a->opts, &a->err);
        break;
    case SRC_FD:
        a->st = hscope_heap_open_fd(&h, a->fd, &a->opts, &a->err);
        break;
    default:
        a->st = hscope_heap_open_memory(&h, a->data, a->len, &a->opts, &a->err);
        break;
    }
    a->target->heap = h; /* owned by the Ruby object from here on */
    return NULL;
}

/* Run the load; raise on failure; return the new Heap. */
static VALUE
run_load(load_args *a, VALUE opts)
{
    VALUE obj = hscope_rb_heap_alloc(hscope_rb_cHeap);
    a->target = hscope_rb_heap_data(obj);
    hscope_error_init(&a->err);
    atomic_init(&a->cancel, 0);
    a->progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    rb_thread_call_without_gvl(load_nogvl, a, hscope_rb_ubf_cancel, a);
    RB_GC_GUARD(a->progress);
    if (a->pstate)
        rb_jump_tag(a->pstate);
    if (a->st != HSCOPE_OK)
        hscope_rb_raise_status(a->st, &a->err);
    hscope_rb_heap_account(a->target);
    return obj;
}

/* Heap._new_empty: a Heap to be filled by Loader#finish. */
static VALUE
heap_s_new_empty(VALUE klass)
{
    return hscope_rb_heap_alloc(hscope_rb_cHeap);
}

/* Heap._open_file(path, opts) */
static VALUE
heap_s_open_file(VALUE klass, VALUE path, VALUE opts)
{
    load_args a;
    memset(&a, 0, sizeof(a));
    FilePathValue(path);
    path = rb_str_new_frozen(path);
    a.kind = SRC_PATH;
    a.path = StringValueCStr(path);
    hscope_rb_load_options(opts, &a.opts);
    VALUE r = run_load(&a, opts);
    RB_GC_GUARD(path);
    return r;
}

/* Clear O_NONBLOCK (Ruby 3 creates pipes non-blocking; the library does
 * blocking reads).  Returns the old flags, or -1 if unchanged. */
static int
fd_make_blocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || !(fl & O_NONBLOCK))
        return -1;
    if (fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
        return -1;
    return fl;
}

int
hscope_rb_io_fd(VALUE io)
{
#ifdef HAVE_RB_IO_DESCRIPTOR
    return rb_io_descriptor(io);
#else
    rb_io_t *fptr;
    GetOpenFile(io, fptr);
    return fptr->fd;
#endif
}

/* Heap._open_io(io, opts): load from the IO's descriptor, to EOF.  A
 * non-blocking descriptor (every Ruby 3 pipe) is made blocking for the
 * duration of the load. */
typedef struct io_load {
    load_args a;
    VALUE opts;
    int oldfl;
} io_load;

static VALUE
io_load_body(VALUE p)
{
    io_load *l = (io_load *)p;
    return run_load(&l->a, l->opts);
}

static VALUE
io_load_ensure(VALUE p)
{
    io_load *l = (io_load *)p;
    if (l->oldfl >= 0)
        fcntl(l->a.fd, F_SETFL, l->oldfl);
    return Qnil;
}

static VALUE
heap_s_open_io(VALUE klass, VALUE io, VALUE opts)
{
    io_load l;
    memset(&l, 0, sizeof(l));
    io = rb_io_get_io(io);
    l.a.kind = SRC_FD;
    l.a.fd = hscope_rb_io_fd(io);
    l.opts = opts;
    hscope_rb_load_options(opts, &l.a.opts);
    l.oldfl = fd_make_blocking(l.a.fd);
    VALUE r = rb_ensure(io_load_body, (VALUE)&l, io_load_ensure, (VALUE)&l);
    RB_GC_GUARD(io);
    RB_GC_GUARD(opts);
    return r;
}

/* Heap._open_memory(string, opts) */
typedef struct mem_load {
    load_args a;
    VALUE opts;
    VALUE str;
} mem_load;

static VALUE
mem_load_body(VALUE p)
{
    mem_load *l = (mem_load *)p;
    return run_load(&l->a, l->opts);
}

static VALUE
mem_load_ensure(VALUE p)
{
    rb_str_unlocktmp(((mem_load *)p)->str);
    return Qnil;
}

static VALUE
heap_s_open_memory(VALUE klass, VALUE str, VALUE opts)
{
    mem_load l;
    memset(&l, 0, sizeof(l));
    StringValue(str);
    /* A private frozen string (shares the bytes of a frozen source) that is
     * locked against modification while the library reads it without the
     * GVL; being on this stack, it is pinned and kept alive meanwhile. */
    l.str = rb_str_new_frozen(str);
    rb_str_locktmp(l.str);
    l.opts = opts;
    l.a.kind = SRC_MEM;
    l.a.data = RSTRING_PTR(l.str);
    l.a.len = (size_t)RSTRING_LEN(l.str);
    hscope_rb_load_options(opts, &l.a.opts);
    VALUE r = rb_ensure(mem_load_body, (VALUE)&l, mem_load_ensure, (VALUE)&l);
    RB_GC_GUARD(l.str);
    RB_GC_GUARD(opts);
    return r;
}

void
hscope_rb_init_load(VALUE mod)
{
    VALUE c = hscope_rb_cHeap;
    rb_define_singleton_method(c, "_new_empty", heap_s_new_empty, 0);
    rb_define_singleton_method(c, "_open_file", heap_s_open_file, 2);
    rb_define_singleton_method(c, "_open_io", heap_s_open_io, 2);
    rb_define_singleton_method(c, "_open_memory", heap_s_open_memory, 2);
}
