/*
 * rb_heapscope.c - Ruby binding of libheapscope.
 *
 * Binding code only: every answer comes from the library, and so does every
 * report (the _write methods run the library's writers into a String or an
 * IO: see "reports" below).  The Ruby classes (lib/heapscope.rb) turn the
 * plain values returned here into Structs; methods starting with an
 * underscore are internal.
 *
 * Handles are TypedData objects with dfree and dsize; the memory the library
 * holds for a handle is reported to the GC (rb_gc_adjust_memory_usage) and to
 * ObjectSpace.memsize_of.  Derived objects (tally, diff, dominator tree,
 * paths) keep their parent Ruby object alive by a write-barriered reference;
 * the library refcounts heaps as well, so the GC may free in any order.
 *
 * Long calls run without the GVL.  Loading is cancellable: the unblock
 * function sets a flag that the load's progress callback polls.  Analyses
 * of a loaded heap (tally, dominators, paths) have no cancellation hook in
 * the library: other threads run meanwhile, and an interrupt takes effect
 * when the call returns.
 *
 * No global state beyond the class objects.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby.h>
#include <ruby/encoding.h>
#include <ruby/io.h>
#include <ruby/thread.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <heapscope/heapscope.h>

void hscope_rb_init_check(VALUE mHeapscope); /* rb_check.c */
#include <zlib.h>

#ifndef HAVE_RB_GC_ADJUST_MEMORY_USAGE
#define rb_gc_adjust_memory_usage(d) ((void)(d))
#endif

static VALUE mHeapscope, mNative, cHeap, cTally, cDiff, cDomTree, cPaths, cHolders, cLoader;
static VALUE cWaste;
static VALUE cSuspects; /* reports (issue 20) */
static VALUE eError;
static VALUE eStatus[HSCOPE_ERR_INTERNAL + 1];

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
static void
raise_status(hscope_status st, const hscope_error *err)
{
    VALUE klass = st > 0 && st <= HSCOPE_ERR_INTERNAL ? eStatus[st] : eError;
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

/* ------------------------------------------------------------------ */
/* Heap                                                               */
/* ------------------------------------------------------------------ */

typedef struct rb_heap {
    hscope_heap_t *heap;
    VALUE owner;       /* a Diff whose heap this is (borrowed), or Qfalse */
    size_t accounted;  /* bytes reported to the GC */
} rb_heap;

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

static VALUE
heap_alloc(VALUE klass)
{
    rb_heap *h;
    VALUE obj = TypedData_Make_Struct(klass, rb_heap, &heap_type, h);
    h->owner = Qfalse;
    return obj;
}

static rb_heap *
heap_data(VALUE obj)
{
    return rb_check_typeddata(obj, &heap_type);
}

static hscope_heap_t *
heap_get(VALUE obj)
{
    rb_heap *h = heap_data(obj);
    if (!h->heap)
        rb_raise(eError, "heap is not loaded");
    return h->heap;
}

/* Report the heap's model + index memory to the GC, once. */
static void
heap_account(rb_heap *h)
{
    hscope_load_stats s;
    hscope_load_stats_init(&s);
    if (!h->heap || h->accounted || hscope_heap_stats(h->heap, &s) != HSCOPE_OK)
        return;
    h->accounted = (size_t)(s.model_bytes + s.index_bytes);
    rb_gc_adjust_memory_usage((ssize_t)h->accounted);
}

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

static void
load_options_from(VALUE opts, hscope_load_options *o)
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

typedef struct load_args {
    rb_heap *target;          /* receives the heap inside the call */
    int kind;
    const char *path;
    int fd;
    const void *data;
    size_t len;
    hscope_load_options opts;
    hscope_error err;
    hscope_status st;
    atomic_int cancel;        /* set by the unblock function */
    VALUE progress;           /* a callable or Qnil */
    uint64_t done, total;
    int pstate;               /* rb_protect state of the progress proc */
    int pstop;                /* the proc returned :cancel */
} load_args;

static void
ubf_cancel(void *p)
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

static int32_t
load_progress(void *ud, uint64_t done, uint64_t total)
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
    a->opts.progress = load_progress;
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
    VALUE obj = heap_alloc(cHeap);
    a->target = heap_data(obj);
    hscope_error_init(&a->err);
    atomic_init(&a->cancel, 0);
    a->progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    rb_thread_call_without_gvl(load_nogvl, a, ubf_cancel, a);
    RB_GC_GUARD(a->progress);
    if (a->pstate)
        rb_jump_tag(a->pstate);
    if (a->st != HSCOPE_OK)
        raise_status(a->st, &a->err);
    heap_account(a->target);
    return obj;
}

/* Heap._new_empty: a Heap to be filled by Loader#finish. */
static VALUE
heap_s_new_empty(VALUE klass)
{
    return heap_alloc(cHeap);
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
    load_options_from(opts, &a.opts);
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

static int
io_fd(VALUE io)
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
    l.a.fd = io_fd(io);
    l.opts = opts;
    load_options_from(opts, &l.a.opts);
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
    load_options_from(opts, &l.a.opts);
    VALUE r = rb_ensure(mem_load_body, (VALUE)&l, mem_load_ensure, (VALUE)&l);
    RB_GC_GUARD(l.str);
    RB_GC_GUARD(opts);
    return r;
}

/* ------------------------------------------------------------------ */
/* pipe_thread: a plain pthread reading a pipe (Loader, GzipSink)     */
/* ------------------------------------------------------------------ */

/*
 * Heapscope.snapshot and Heapscope.dump(gzip: true) write
 * ObjectSpace.dump_all into a pipe on the Ruby thread, which gives up the
 * GVL whenever the pipe is full.  The read end is read by a plain pthread,
 * not a Ruby thread: it never touches the Ruby heap being dumped.
 *
 * The thread reads its own dup of the read end.  Its state is shared by
 * the thread and the Ruby object and freed by whichever lets go last, so
 * the Ruby object may be collected while the thread still runs (an
 * exception in dump_all): the thread then sees EOF (the write end is
 * closed by the caller's ensure) or the cancel flag, and cleans up after
 * itself.  A pipe_thread is the first member of each state.
 */
typedef struct pipe_thread pipe_thread;
struct pipe_thread {
    pthread_t tid;
    int fd;                  /* our own dup of the read end, or -1 */
    atomic_int cancel;
    atomic_int refs;
    int started, joined;
    void (*destroy)(pipe_thread *); /* frees the whole state */
};

static void
pipe_thread_init(pipe_thread *t, void (*destroy)(pipe_thread *))
{
    t->fd = -1;
    atomic_init(&t->cancel, 0);
    atomic_init(&t->refs, 1);
    t->started = t->joined = 0;
    t->destroy = destroy;
}

static void
pipe_thread_release(pipe_thread *t)
{
    if (atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    if (t->fd >= 0)
        close(t->fd);
    t->destroy(t);
}

/* On the thread, once it reads no more: close our end now, so that a
 * writer still writing gets EPIPE instead of blocking on a pipe nobody
 * reads. */
static void
pipe_thread_close(pipe_thread *t)
{
    close(t->fd);
    t->fd = -1;
}

/* The Ruby object's dfree: a thread still running is told to stop and
 * left to finish on its own. */
static void
pipe_thread_abandon(pipe_thread *t)
{
    if (t->started && !t->joined) {
        atomic_store(&t->cancel, 1);
        pthread_detach(t->tid);
    }
    pipe_thread_release(t);
}

/* Duplicate io's descriptor (made blocking; a larger pipe buffer where
 * the system allows) and run fn(t) on a new thread.  Raises on failure;
 * the state is then the Ruby object's alone.  The caller may close io at
 * once. */
static void
pipe_thread_start(pipe_thread *t, VALUE io, void *(*fn)(void *))
{
    io = rb_io_get_io(io);
    t->fd = fcntl(io_fd(io), F_DUPFD_CLOEXEC, 3);
    if (t->fd < 0)
        rb_sys_fail("dup");
    int fl = fcntl(t->fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK))
        fcntl(t->fd, F_SETFL, fl & ~O_NONBLOCK);
#ifdef F_SETPIPE_SZ
    fcntl(t->fd, F_SETPIPE_SZ, 1 << 20); /* fewer wake-ups; best effort */
#endif
    atomic_store(&t->refs, 2);
    int rc = pthread_create(&t->tid, NULL, fn, t);
    if (rc != 0) {
        atomic_store(&t->refs, 1);
        errno = rc;
        rb_sys_fail("pthread_create");
    }
    t->started = 1;
    RB_GC_GUARD(io);
}

/* ------------------------------------------------------------------ */
/* Loader: parse a pipe on a native thread (Heapscope.snapshot)       */
/* ------------------------------------------------------------------ */

/* The thread parses the read end with hscope_heap_open_fd: the dump never
 * exists as a whole, on disk or in memory. */
typedef struct loader_state {
    pipe_thread t;           /* first */
    hscope_load_options opts;
    hscope_error err;
    hscope_status st;
    hscope_heap_t *heap;
} loader_state;

typedef struct rb_loader {
    loader_state *s;
} rb_loader;

static void
loader_destroy(pipe_thread *t)
{
    loader_state *s = (loader_state *)t;
    hscope_heap_free(s->heap);
    free(s);
}

static int32_t
loader_progress(void *ud, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    return atomic_load(&((loader_state *)ud)->t.cancel);
}

static void *
loader_main(void *p)
{
    loader_state *s = p;
    s->opts.progress = loader_progress;
    s->opts.progress_user_data = s;
    s->st = hscope_heap_open_fd(&s->heap, s->t.fd, &s->opts, &s->err);
    pipe_thread_close(&s->t);
    pipe_thread_release(&s->t);
    return NULL;
}

static void
loader_free(void *p)
{
    rb_loader *l = p;
    if (l->s)
        pipe_thread_abandon(&l->s->t);
    xfree(l);
}

static size_t
loader_memsize(const void *p)
{
    return sizeof(rb_loader) + sizeof(loader_state);
}

static const rb_data_type_t loader_type = {
    "Heapscope::Native::Loader",
    { NULL, loader_free, loader_memsize, NULL, { 0 } },
    0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

/* Loader.start(read_io, opts): start parsing what arrives on read_io.
 * The descriptor is duplicated, so the caller may close read_io at once. */
static VALUE
loader_s_start(VALUE klass, VALUE io, VALUE opts)
{
    rb_loader *l;
    VALUE obj = TypedData_Make_Struct(klass, rb_loader, &loader_type, l);
    if (!NIL_P(opts) && RTEST(rb_hash_lookup(opts, ID2SYM(rb_intern("progress")))))
        rb_raise(rb_eArgError, "progress: is not supported by snapshot");
    loader_state *s = calloc(1, sizeof(*s));
    if (!s)
        rb_memerror();
    pipe_thread_init(&s->t, loader_destroy);
    hscope_error_init(&s->err);
    l->s = s;
    load_options_from(opts, &s->opts);
    pipe_thread_start(&s->t, io, loader_main);
    return obj;
}

static loader_state *
loader_get(VALUE obj)
{
    rb_loader *l = rb_check_typeddata(obj, &loader_type);
    if (!l->s)
        rb_raise(eError, "loader is not started");
    return l->s;
}

/* Loader#cancel: ask the thread to stop at its next progress check. */
static VALUE
loader_cancel(VALUE self)
{
    atomic_store(&loader_get(self)->t.cancel, 1);
    return self;
}

typedef struct join_args {
    loader_state *s;
    rb_heap *target;
    pid_t child;             /* the fork snapshot's writer, or 0 */
} join_args;

static void *
loader_join_nogvl(void *p)
{
    join_args *j = p;
    pthread_join(j->s->t.tid, NULL);
    j->s->t.joined = 1;
    j->target->heap = j->s->heap;
    j->s->heap = NULL;
    return NULL;
}

/* An interrupt (Ctrl-C, Thread#raise, Timeout) sets the cancel flag,
 * which the loader sees at its next progress check - that is, only when
 * data arrives.  A fork snapshot's child may never send any (stuck in a
 * lock it inherited), so the child is killed too: its end of the pipe
 * closes and the loader sees EOF.  kill() is async-signal-safe, and the
 * pid cannot have been reused: the caller reaps the child only after
 * finish returns. */
static void
ubf_loader(void *p)
{
    join_args *j = p;
    atomic_store(&j->s->t.cancel, 1);
    if (j->child > 0)
        kill(j->child, SIGKILL);
}

/* Loader#finish(into = nil, child_pid = nil): wait for the thread (close
 * the write end first!) and return the Heap - `into`, an empty Heap made
 * beforehand by Heap._new_empty, or a new one - or raise the load's error.
 * With child_pid (a fork snapshot's writer), an interrupt also kills that
 * process. */
static VALUE
loader_finish(int argc, VALUE *argv, VALUE self)
{
    rb_check_arity(argc, 0, 2);
    VALUE into = argc > 0 ? argv[0] : Qnil;
    pid_t child = argc > 1 && !NIL_P(argv[1]) ? (pid_t)NUM2INT(argv[1]) : 0;
    loader_state *s = loader_get(self);
    if (s->t.joined)
        rb_raise(eError, "loader already finished");
    VALUE obj = NIL_P(into) ? heap_alloc(cHeap) : into;
    if (heap_data(obj)->heap)
        rb_raise(rb_eArgError, "heap already loaded");
    join_args j = { s, heap_data(obj), child };
    rb_thread_call_without_gvl(loader_join_nogvl, &j, ubf_loader, &j);
    if (s->st != HSCOPE_OK)
        raise_status(s->st, &s->err);
    heap_account(j.target);
    return obj;
}

/* ------------------------------------------------------------------ */
/* GzipSink: gzip a pipe into a file on a native thread (Heapscope.dump) */
/* ------------------------------------------------------------------ */

/*
 * Heapscope.dump(path, gzip: true) writes ObjectSpace.dump_all into a pipe
 * and compresses the read end into the file.  The reader must not be a
 * Ruby thread: dump_all releases the GVL whenever the pipe is full, and a
 * Ruby reader (IO.copy_stream into Zlib::GzipWriter) would then read(2)
 * into a Ruby String without the GVL while dump_all is escaping that very
 * String into the dump - about one dump in a hundred had a line with raw
 * control bytes from the half-read buffer (invalid JSON, a skipped line).
 * A pipe_thread reading into malloc'd memory touches no Ruby object.
 */
typedef struct gzsink_state {
    pipe_thread t;           /* first */
    gzFile gz;
    atomic_int done;         /* the thread has closed the file */
    int err;                 /* errno of the first failure, or 0 */
    char what[160];          /* what failed, for the exception */
    uint64_t bytes_in;
} gzsink_state;

typedef struct rb_gzsink {
    gzsink_state *s;
} rb_gzsink;

static void
gzsink_destroy(pipe_thread *t)
{
    gzsink_state *s = (gzsink_state *)t;
    if (s->gz)
        gzclose(s->gz);
    free(s);
}

static void
gzsink_fail(gzsink_state *s, int err, const char *what)
{
    if (s->err)
        return;
    s->err = err ? err : EIO;
    snprintf(s->what, sizeof(s->what), "%s", what);
}

static void *
gzsink_main(void *p)
{
    gzsink_state *s = p;
    size_t cap = 1 << 17;
    char *buf = malloc(cap);
    if (!buf)
        gzsink_fail(s, ENOMEM, "gzip buffer");
    while (buf && !s->err && !atomic_load(&s->t.cancel)) {
        ssize_t n = read(s->t.fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            gzsink_fail(s, errno, "read from the dump pipe");
            break;
        }
        if (n == 0)
            break;
        s->bytes_in += (uint64_t)n;
        if (gzwrite(s->gz, buf, (unsigned)n) != (int)n) {
            int zerr;
            const char *msg = gzerror(s->gz, &zerr);
            gzsink_fail(s, zerr == Z_ERRNO ? errno : EIO, msg && *msg ? msg : "gzip write");
        }
    }
    free(buf);
    if (atomic_load(&s->t.cancel))
        gzsink_fail(s, EINTR, "interrupted");
    pipe_thread_close(&s->t);
    int rc = gzclose(s->gz);
    s->gz = NULL;
    if (rc != Z_OK)
        gzsink_fail(s, rc == Z_ERRNO ? errno : EIO, "close of the gzip file");
    atomic_store(&s->done, 1);
    pipe_thread_release(&s->t);
    return NULL;
}

static void
gzsink_free(void *p)
{
    rb_gzsink *g = p;
    if (g->s)
        pipe_thread_abandon(&g->s->t);
    xfree(g);
}

static size_t
gzsink_memsize(const void *p)
{
    (void)p;
    return sizeof(rb_gzsink) + sizeof(gzsink_state);
}

static const rb_data_type_t gzsink_type = {
    "Heapscope::Native::GzipSink",
    { NULL, gzsink_free, gzsink_memsize, NULL, { 0 } },
    0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

/* GzipSink.start(read_io, path): create +path+ (raises at once if it
 * cannot) and gzip what arrives on read_io into it, on a native thread.
 * The descriptor is duplicated, so the caller may close read_io at once. */
static VALUE
gzsink_s_start(VALUE klass, VALUE io, VALUE path)
{
    rb_gzsink *g;
    VALUE obj = TypedData_Make_Struct(klass, rb_gzsink, &gzsink_type, g);
    FilePathValue(path);
    gzsink_state *s = calloc(1, sizeof(*s));
    if (!s)
        rb_memerror();
    pipe_thread_init(&s->t, gzsink_destroy);
    atomic_init(&s->done, 0);
    g->s = s;
    int out = open(StringValueCStr(path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (out < 0)
        rb_sys_fail_str(path);
    s->gz = gzdopen(out, "wb");     /* zlib's default level, as Zlib::GzipWriter */
    if (!s->gz) {
        close(out);
        rb_memerror();
    }
    gzbuffer(s->gz, 1 << 17);
    pipe_thread_start(&s->t, io, gzsink_main);
    return obj;
}

/* GzipSink#finish: wait for the thread (close the write end first!);
 * returns the number of bytes compressed, or raises SystemCallError. */
static VALUE
gzsink_finish(VALUE self)
{
    rb_gzsink *g = rb_check_typeddata(self, &gzsink_type);
    gzsink_state *s = g->s;
    if (!s || !s->t.started)
        rb_raise(eError, "gzip sink is not started");
    if (s->t.joined)
        rb_raise(eError, "gzip sink already finished");
    /* Wait with Ruby's own sleep, not rb_thread_call_without_gvl: a fork
     * snapshot's child writes its dump under Thread.handle_interrupt(Object
     * => :never), where Ruby 3.1's nogvl region never got the GVL back (the
     * child hung).  The wait is short: the sink only drains what is left in
     * the pipe once dump_all has returned and the write end is closed. */
    struct timeval tv = { 0, 500 };
    while (!atomic_load(&s->done)) {
        rb_thread_wait_for(tv);
        if (tv.tv_usec < 20000)
            tv.tv_usec *= 2;
    }
    pthread_join(s->t.tid, NULL);
    s->t.joined = 1;
    if (s->err) {
        errno = s->err;
        rb_sys_fail(s->what);
    }
    return ULL2NUM(s->bytes_in);
}

/* ------------------------------------------------------------------ */
/* Heap accessors                                                     */
/* ------------------------------------------------------------------ */

static hscope_id
id_arg(const hscope_heap_t *h, VALUE v)
{
    unsigned long long id = NUM2ULL(v);
    if (id >= hscope_heap_object_count(h))
        rb_raise(rb_eIndexError, "object id %llu out of range", id);
    return (hscope_id)id;
}

static VALUE
cstr_or_nil(const char *s)
{
    return s ? rb_utf8_str_new_cstr(s) : Qnil;
}

static VALUE
heap_object_count(VALUE self)
{
    return ULL2NUM(hscope_heap_object_count(heap_get(self)));
}

static VALUE
heap_reference_count(VALUE self)
{
    return ULL2NUM(hscope_heap_reference_count(heap_get(self)));
}

static VALUE
heap_dangling_count(VALUE self)
{
    return ULL2NUM(hscope_heap_dangling_count(heap_get(self)));
}

#define STAT(name) rb_hash_aset(r, ID2SYM(rb_intern(#name)), ULL2NUM(s.name))

/* Heap#stats: the library's load statistics (hscope_load_stats). */
static VALUE
heap_stats(VALUE self)
{
    hscope_load_stats s;
    hscope_load_stats_init(&s);
    hscope_status st = hscope_heap_stats(heap_get(self), &s);
    if (st != HSCOPE_OK)
        raise_status(st, NULL);
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
    hscope_heap_t *h = heap_get(self);
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
    hscope_heap_t *h = heap_get(self);
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
    hscope_heap_t *h = heap_get(self);
    uint32_t n = hscope_heap_root_category_count(h);
    VALUE r = rb_ary_new_capa(n);
    for (uint32_t i = 0; i < n; i++) {
        const hscope_id *t;
        uint64_t cnt = 0, dang = 0;
        hscope_heap_root_targets(h, i, &t, &cnt, &dang);
        rb_ary_push(r, rb_ary_new_from_args(4, cstr_or_nil(hscope_heap_root_category_name(h, i)),
                                            ULL2NUM(hscope_heap_root_category_records(h, i)),
                                            ULL2NUM(cnt), ULL2NUM(dang)));
    }
    return r;
}

static VALUE
root_name(const hscope_heap_t *h, int32_t cat)
{
    return cat >= 0 ? cstr_or_nil(hscope_heap_root_category_name(h, (uint32_t)cat)) : Qnil;
}

/* Heap#_find(address) -> id or nil */
static VALUE
heap_find(VALUE self, VALUE addr)
{
    hscope_id id;
    if (hscope_heap_find(heap_get(self), NUM2ULL(addr), &id) != HSCOPE_OK)
        return Qnil;
    return UINT2NUM(id);
}

static VALUE
heap_address(VALUE self, VALUE id)
{
    hscope_heap_t *h = heap_get(self);
    return ULL2NUM(hscope_heap_object_address(h, id_arg(h, id)));
}

/* Heap#_info(id) -> [address, type, class_label, detail, memsize, size,
 *                    generation, file, line, method, flags, class_address,
 *                    label] (label: hscope_heap_object_label, the name an
 *                    object goes by in every output) */
static VALUE
heap_info(VALUE self, VALUE vid)
{
    hscope_heap_t *h = heap_get(self);
    hscope_id id = id_arg(h, vid);
    int64_t gen = hscope_heap_object_generation(h, id);
    uint32_t line = hscope_heap_object_line(h, id);
    VALUE v[13] = {
        ULL2NUM(hscope_heap_object_address(h, id)),
        rb_str_new_cstr(hscope_heap_type_name(h, hscope_heap_object_type(h, id))),
        cstr_or_nil(hscope_heap_object_class_label(h, id)),
        cstr_or_nil(hscope_heap_object_detail(h, id)),
        ULL2NUM(hscope_heap_object_memsize(h, id)),
        ULL2NUM(hscope_heap_object_size(h, id)),
        gen < 0 ? Qnil : LL2NUM(gen),
        cstr_or_nil(hscope_heap_object_file(h, id)),
        line ? UINT2NUM(line) : Qnil,
        cstr_or_nil(hscope_heap_object_method(h, id)),
        UINT2NUM(hscope_heap_object_flags(h, id)),
        ULL2NUM(hscope_heap_object_class_address(h, id)),
        cstr_or_nil(hscope_heap_object_label(h, id)),
    };
    return rb_ary_new_from_values(13, v);
}

static VALUE
ids_to_ary(const hscope_id *ids, uint64_t n)
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
    hscope_heap_t *h = heap_get(self);
    const hscope_id *t;
    uint64_t n;
    hscope_status st = hscope_heap_object_references(h, id_arg(h, vid), &t, &n);
    if (st != HSCOPE_OK)
        raise_status(st, NULL);
    return ids_to_ary(t, n);
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
    a.h = heap_get(self);
    a.id = id_arg(a.h, vid);
    hscope_error_init(&a.err);
    rb_thread_call_without_gvl(referrers_nogvl, &a, NULL, NULL);
    if (a.st != HSCOPE_OK)
        raise_status(a.st, &a.err);
    VALUE r = ids_to_ary(a.src, a.n);
    RB_GC_GUARD(self);
    return r;
}

/* Heap#_value(id) -> String (ASCII-8BIT) or nil; needs values: true */
static VALUE
heap_value(VALUE self, VALUE vid)
{
    hscope_heap_t *h = heap_get(self);
    const char *d;
    uint64_t n;
    if (hscope_heap_object_value(h, id_arg(h, vid), &d, &n) != HSCOPE_OK)
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
    hscope_status st = hscope_heap_column(heap_get(self), NUM2INT(code), &data, &len, &et);
    if (st != HSCOPE_OK)
        raise_status(st, NULL);
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
    return rb_str_new_cstr(hscope_heap_type_name(heap_get(self), NUM2INT(code)));
}

/* ------------------------------------------------------------------ */
/* derived handles: tally, diff, dominator tree, paths, holders       */
/* ------------------------------------------------------------------ */

typedef struct rb_handle {
    void *ptr;
    void (*free_fn)(void *);
    VALUE parent;          /* the Ruby object whose heap this refers to */
    hscope_heap_t *heap;   /* the heap the handle's ids refer to */
    size_t accounted;
} rb_handle;

static void
handle_mark(void *p)
{
    rb_gc_mark_movable(((rb_handle *)p)->parent);
}

static void
handle_compact(void *p)
{
    rb_handle *h = p;
    h->parent = rb_gc_location(h->parent);
}

static void
handle_free(void *p)
{
    rb_handle *h = p;
    if (h->ptr && h->free_fn)
        h->free_fn(h->ptr);
    if (h->accounted)
        rb_gc_adjust_memory_usage(-(ssize_t)h->accounted);
    xfree(h);
}

static size_t
handle_memsize(const void *p)
{
    const rb_handle *h = p;
    return sizeof(*h) + h->accounted;
}

#define HANDLE_TYPE(var, name)                                                    \
    static const rb_data_type_t var = {                                           \
        name,                                                                     \
        { handle_mark, handle_free, handle_memsize, handle_compact, { 0 } },      \
        0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,              \
    }

HANDLE_TYPE(tally_type, "Heapscope::Native::Tally");
HANDLE_TYPE(diff_type, "Heapscope::Diff");
HANDLE_TYPE(domtree_type, "Heapscope::DominatorTree");
HANDLE_TYPE(paths_type, "Heapscope::Native::Paths");
HANDLE_TYPE(holders_type, "Heapscope::Native::Holders");
HANDLE_TYPE(waste_type, "Heapscope::Waste");

static void free_tally(void *p) { hscope_tally_free(p); }
static void free_diff(void *p) { hscope_diff_free(p); }
static void free_domtree(void *p) { hscope_domtree_free(p); }
static void free_paths(void *p) { hscope_paths_free(p); }
static void free_holders(void *p) { hscope_holders_free(p); }
static void free_waste(void *p) { hscope_waste_free(p); }

static VALUE
handle_new(VALUE klass, const rb_data_type_t *type, void (*free_fn)(void *),
           VALUE parent, hscope_heap_t *heap)
{
    rb_handle *h;
    VALUE obj = TypedData_Make_Struct(klass, rb_handle, type, h);
    h->free_fn = free_fn;
    h->heap = heap;
    RB_OBJ_WRITE(obj, &h->parent, parent);
    return obj;
}

static rb_handle *
handle_get(VALUE obj, const rb_data_type_t *type)
{
    rb_handle *h = rb_check_typeddata(obj, type);
    if (!h->ptr)
        rb_raise(eError, "%s is not initialised", type->wrap_struct_name);
    return h;
}

static void
handle_account(rb_handle *h, uint64_t bytes)
{
    h->accounted = (size_t)bytes;
    rb_gc_adjust_memory_usage((ssize_t)h->accounted);
}

/* One analysis call run without the GVL.  The result is stored straight
 * into the pre-allocated handle, so an interrupt raised when the call
 * returns cannot leak it. */
typedef struct analysis_args {
    int what;
    rb_handle *out;
    hscope_heap_t *heap;
    const hscope_heap_t *cheap;
    hscope_diff_t *diff;
    hscope_domtree_t *tree;
    hscope_heap_t *a, *b, *c;
    const char *pa, *pb, *pc;
    const char *key;
    const hscope_id *ids;
    uint64_t nids;
    hscope_tally_options topts;
    hscope_dom_options dopts;
    hscope_diff_options fopts;
    hscope_waste_options wopts;
    const char *const *paths;   /* AN_TIMELINE, AN_EXPORT: the dumps */
    uint64_t npaths;
    const char *dir;            /* AN_EXPORT */
    hscope_timeline_options lopts;
    hscope_export_options xopts;
    hscope_html_options hopts;  /* AN_HTML */
    load_args *load;            /* dumps read by the call: progress / cancellation */
    hscope_error err;
    hscope_status st;
} analysis_args;

enum { AN_TALLY, AN_DIFF_TALLY, AN_DOMTREE, AN_PATHS, AN_DIFF, AN_DIFF_FILES,
       AN_HOLDERS, AN_WASTE_FILE, AN_WASTE_HEAP,
       AN_TALLY_FILE, AN_TIMELINE, AN_EXPORT /* dumps read from files (timeline section) */,
       AN_HTML /* the HTML report */ };

static void *
analysis_nogvl(void *p)
{
    analysis_args *a = p;
    void *res = NULL;
    if (a->load) {
        a->load->opts.progress = load_progress;
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

static void
run_analysis(analysis_args *a)
{
    hscope_error_init(&a->err);
    if (a->load) {
        atomic_init(&a->load->cancel, 0);
        rb_thread_call_without_gvl(analysis_nogvl, a, ubf_cancel, a->load);
        if (a->load->pstate)
            rb_jump_tag(a->load->pstate);
    } else {
        rb_thread_call_without_gvl(analysis_nogvl, a, NULL, NULL);
    }
    if (a->st != HSCOPE_OK)
        raise_status(a->st, &a->err);
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

static uint64_t
top_arg(VALUE top)
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
static VALUE
tally_args(VALUE key, VALUE top, VALUE sort, const char **ckey, hscope_tally_options *o)
{
    VALUE k = rb_str_new_frozen(StringValue(key));
    *ckey = StringValueCStr(k);
    hscope_tally_options_init(o);
    o->top = top_arg(top);
    o->sort = sort_arg(sort);
    return k;
}

/* Heap#_tally(key, top, sort, keep_dumper) -> Native::Tally */
static VALUE
heap_tally(VALUE self, VALUE key, VALUE top, VALUE sort, VALUE keep_dumper)
{
    analysis_args a;
    memset(&a, 0, sizeof(a));
    a.heap = heap_get(self);
    key = tally_args(key, top, sort, &a.key, &a.topts);
    if (!RTEST(keep_dumper))
        a.topts.flags |= HSCOPE_TALLY_SKIP_DUMPER;
    VALUE obj = handle_new(cTally, &tally_type, free_tally, self, a.heap);
    a.out = DATA_PTR(obj);
    a.what = AN_TALLY;
    run_analysis(&a);
    handle_account(a.out, hscope_tally_row_count(a.out->ptr) * 48);
    RB_GC_GUARD(key);
    return obj;
}

static void
dom_opts(hscope_dom_options *o, VALUE class_edges)
{
    hscope_dom_options_init(o);
    if (!RTEST(class_edges))
        o->flags |= HSCOPE_DOM_NO_CLASS_EDGES;
}

/* Heap#_dominators(class_edges) -> DominatorTree */
static VALUE
heap_dominators(VALUE self, VALUE class_edges)
{
    analysis_args a;
    memset(&a, 0, sizeof(a));
    a.heap = heap_get(self);
    dom_opts(&a.dopts, class_edges);
    VALUE obj = handle_new(cDomTree, &domtree_type, free_domtree, self, a.heap);
    a.out = DATA_PTR(obj);
    a.what = AN_DOMTREE;
    run_analysis(&a);
    /* idom + retained count + retained size: 16 bytes per object */
    handle_account(a.out, hscope_heap_object_count(a.heap) * 16);
    return obj;
}

/* Heap#_paths(class_edges) -> Native::Paths */
static VALUE
heap_paths(VALUE self, VALUE class_edges)
{
    analysis_args a;
    memset(&a, 0, sizeof(a));
    a.heap = heap_get(self);
    dom_opts(&a.dopts, class_edges);
    VALUE obj = handle_new(cPaths, &paths_type, free_paths, self, a.heap);
    a.out = DATA_PTR(obj);
    a.what = AN_PATHS;
    run_analysis(&a);
    handle_account(a.out, hscope_heap_object_count(a.heap) * 4);
    return obj;
}

/* ---- Tally ---- */

static VALUE
tally_rows(VALUE self)
{
    rb_handle *h = handle_get(self, &tally_type);
    uint64_t n = hscope_tally_row_count(h->ptr);
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++)
        rb_ary_push(r, rb_ary_new_from_args(3, cstr_or_nil(hscope_tally_row_key(h->ptr, i)),
                                            ULL2NUM(hscope_tally_row_count_of(h->ptr, i)),
                                            ULL2NUM(hscope_tally_row_memsize(h->ptr, i))));
    return r;
}

static VALUE
tally_group_count(VALUE self)
{
    return ULL2NUM(hscope_tally_group_count(handle_get(self, &tally_type)->ptr));
}

/* Native::Tally#excluded: the dumper's objects left out */
static VALUE
tally_excluded(VALUE self)
{
    return ULL2NUM(hscope_tally_excluded(handle_get(self, &tally_type)->ptr));
}

static VALUE
tally_totals(VALUE self)
{
    uint64_t c = 0, m = 0;
    hscope_tally_totals(handle_get(self, &tally_type)->ptr, &c, &m);
    return rb_assoc_new(ULL2NUM(c), ULL2NUM(m));
}

/* Tally#_row_addresses(i, limit) -> [addresses] of the row's members
 * (tallies of a diff only), at most limit (nil: all). */
static VALUE
tally_row_addresses(VALUE self, VALUE vi, VALUE limit)
{
    rb_handle *h = handle_get(self, &tally_type);
    const hscope_id *ids;
    uint64_t n;
    hscope_status st = hscope_tally_row_objects(h->ptr, NUM2ULL(vi), &ids, &n);
    if (st != HSCOPE_OK)
        raise_status(st, NULL);
    if (!NIL_P(limit) && (uint64_t)NUM2ULL(limit) < n)
        n = NUM2ULL(limit);
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t k = 0; k < n; k++)
        rb_ary_push(r, ULL2NUM(hscope_heap_object_address(h->heap, ids[k])));
    RB_GC_GUARD(self);
    return r;
}

/* ---- Diff ---- */

static uint32_t
diff_flags(VALUE address_only, VALUE keep_dumper)
{
    return (RTEST(address_only) ? HSCOPE_DIFF_ADDRESS_ONLY : 0) |
           (RTEST(keep_dumper) ? HSCOPE_DIFF_KEEP_DUMPER : 0);
}

/* Diff._compute(a, b, c_or_nil, address_only, keep_dumper) */
static VALUE
diff_s_compute(VALUE klass, VALUE a, VALUE b, VALUE c, VALUE address_only, VALUE keep_dumper)
{
    analysis_args x;
    memset(&x, 0, sizeof(x));
    x.a = heap_get(a);
    x.b = heap_get(b);
    x.c = NIL_P(c) ? NULL : heap_get(c);
    hscope_diff_options_init(&x.fopts);
    x.fopts.flags = diff_flags(address_only, keep_dumper);
    VALUE target = NIL_P(c) ? b : c;
    VALUE obj = handle_new(klass, &diff_type, free_diff, target, heap_get(target));
    x.out = DATA_PTR(obj);
    x.what = AN_DIFF;
    run_analysis(&x);
    handle_account(x.out, hscope_diff_count(x.out->ptr) * 4);
    RB_GC_GUARD(a);
    RB_GC_GUARD(b);
    RB_GC_GUARD(c);
    return obj;
}

/* Diff._files(path_a, path_b, path_c_or_nil, load_opts, address_only,
 * keep_dumper): only the last dump is loaded; the others are streamed.
 * The loaded heap is borrowed from the diff: its Heap object and the Diff
 * keep each other alive. */
static VALUE
diff_s_files(VALUE klass, VALUE pa, VALUE pb, VALUE pc, VALUE opts, VALUE address_only,
             VALUE keep_dumper)
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
    load_options_from(opts, &l.opts);
    l.progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    x.load = &l;
    hscope_diff_options_init(&x.fopts);
    x.fopts.flags = diff_flags(address_only, keep_dumper);
    VALUE obj = handle_new(klass, &diff_type, free_diff, Qfalse, NULL);
    x.out = DATA_PTR(obj);
    x.what = AN_DIFF_FILES;
    run_analysis(&x);
    rb_handle *d = x.out;
    d->heap = hscope_diff_heap(d->ptr);
    VALUE hobj = heap_alloc(cHeap);
    rb_heap *hh = heap_data(hobj);
    hh->heap = d->heap;
    RB_OBJ_WRITE(hobj, &hh->owner, obj);
    RB_OBJ_WRITE(obj, &d->parent, hobj);
    heap_account(hh);
    handle_account(d, hscope_diff_count(d->ptr) * 4);
    RB_GC_GUARD(pa);
    RB_GC_GUARD(pb);
    RB_GC_GUARD(pc);
    RB_GC_GUARD(l.progress);
    return obj;
}

static hscope_diff_t *
diff_get(VALUE self)
{
    return handle_get(self, &diff_type)->ptr;
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

static VALUE diff_reused(VALUE self) { return ULL2NUM(hscope_diff_reused_addresses(diff_get(self))); }
static VALUE diff_warning_bits(VALUE self) { return UINT2NUM(hscope_diff_warnings(diff_get(self))); }
static VALUE diff_warning_text(VALUE self) { return cstr_or_nil(hscope_diff_warning_text(diff_get(self))); }

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
    return handle_get(self, &diff_type)->parent;
}

/* Diff#_addresses(limit) -> leaked addresses, ascending by dump order */
static VALUE
diff_addresses(VALUE self, VALUE limit)
{
    rb_handle *h = handle_get(self, &diff_type);
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
    rb_handle *d = handle_get(self, &diff_type);
    a.diff = d->ptr;
    key = tally_args(key, top, sort, &a.key, &a.topts);
    VALUE obj = handle_new(cTally, &tally_type, free_tally, self, d->heap);
    a.out = DATA_PTR(obj);
    a.what = AN_DIFF_TALLY;
    run_analysis(&a);
    uint64_t n;
    diff_ids(d, &n);
    handle_account(a.out, hscope_tally_row_count(a.out->ptr) * 48 + n * 4);
    RB_GC_GUARD(key);
    return obj;
}

/* ---- holders ---- */

static VALUE
holders_rows(VALUE hobj, const hscope_heap_t *heap)
{
    rb_handle *h = handle_get(hobj, &holders_type);
    uint64_t n = hscope_holders_count(h->ptr);
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++) {
        hscope_id id;
        int32_t cat = -1;
        uint64_t cnt = 0, mem = 0;
        hscope_holders_get(h->ptr, i, &id, &cat, &cnt, &mem);
        rb_ary_push(r, rb_ary_new_from_args(4, id == HSCOPE_ID_NONE ? Qnil : UINT2NUM(id),
                                            id == HSCOPE_ID_NONE ? root_name(heap, cat) : Qnil,
                                            ULL2NUM(cnt), ULL2NUM(mem)));
    }
    return r;
}

/* DominatorTree#_holders(ids) -> as above, for a set of object ids */
static VALUE
domtree_holders(VALUE self, VALUE ary)
{
    rb_handle *t = handle_get(self, &domtree_type);
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
    VALUE hobj = handle_new(cHolders, &holders_type, free_holders, self, t->heap);
    a.out = DATA_PTR(hobj);
    a.what = AN_HOLDERS;
    run_analysis(&a);
    VALUE r = holders_rows(hobj, t->heap);
    RB_GC_GUARD(buf);
    RB_GC_GUARD(hobj);
    return r;
}

/* ---- DominatorTree ---- */

static hscope_domtree_t *
tree_get(VALUE self)
{
    return handle_get(self, &domtree_type)->ptr;
}

static VALUE
domtree_heap(VALUE self)
{
    return handle_get(self, &domtree_type)->parent;
}

/* DominatorTree#_top(n) -> ids, largest retained size first */
static VALUE
domtree_top(VALUE self, VALUE vn)
{
    rb_handle *t = handle_get(self, &domtree_type);
    uint64_t n = top_arg(vn);
    uint64_t cnt = hscope_heap_object_count(t->heap);
    if (n > cnt)
        n = cnt;
    VALUE tmp;
    hscope_id *buf = ALLOCV_N(hscope_id, tmp, n ? n : 1);
    uint64_t got = hscope_domtree_top(t->ptr, buf, n);
    VALUE r = ids_to_ary(buf, got);
    ALLOCV_END(tmp);
    return r;
}

/* DominatorTree#_retained(id) -> [bytes, objects] or nil if unreachable */
static VALUE
domtree_retained(VALUE self, VALUE vid)
{
    rb_handle *t = handle_get(self, &domtree_type);
    hscope_id id = id_arg(t->heap, vid);
    if (!hscope_domtree_reachable(t->ptr, id))
        return Qnil;
    return rb_assoc_new(ULL2NUM(hscope_domtree_retained(t->ptr, id)),
                        ULL2NUM(hscope_domtree_retained_count(t->ptr, id)));
}

/* DominatorTree#_idom(id) -> [id or nil, root category or nil] or nil */
static VALUE
domtree_idom(VALUE self, VALUE vid)
{
    rb_handle *t = handle_get(self, &domtree_type);
    hscope_id idom;
    int32_t cat = -1;
    if (hscope_domtree_idom(t->ptr, id_arg(t->heap, vid), &idom, &cat) != HSCOPE_OK)
        return Qnil;
    if (idom != HSCOPE_ID_NONE)
        return rb_assoc_new(UINT2NUM(idom), Qnil);
    return rb_assoc_new(Qnil, root_name(t->heap, cat));
}

/* DominatorTree#_chain(id) -> [root category or nil, ids top-down] or nil */
static VALUE
domtree_chain(VALUE self, VALUE vid)
{
    rb_handle *t = handle_get(self, &domtree_type);
    hscope_id id = id_arg(t->heap, vid);
    uint64_t len = hscope_domtree_chain(t->ptr, id, NULL, 0, NULL);
    if (!len)
        return Qnil;
    VALUE tmp;
    hscope_id *buf = ALLOCV_N(hscope_id, tmp, len);
    int32_t cat = -1;
    len = hscope_domtree_chain(t->ptr, id, buf, len, &cat);
    VALUE r = rb_assoc_new(root_name(t->heap, cat), ids_to_ary(buf, len));
    ALLOCV_END(tmp);
    return r;
}

/* DominatorTree#_children(id or nil, root category index) -> ids */
static VALUE
domtree_children(VALUE self, VALUE vid, VALUE vcat)
{
    rb_handle *t = handle_get(self, &domtree_type);
    hscope_id id = NIL_P(vid) ? HSCOPE_ID_NONE : id_arg(t->heap, vid);
    const hscope_id *kids;
    uint64_t n;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_domtree_children(t->ptr, id, NUM2INT(vcat), &kids, &n, &err);
    if (st != HSCOPE_OK)
        raise_status(st, &err);
    return ids_to_ary(kids, n);
}

/* DominatorTree#_unreachable(limit) -> ids */
static VALUE
domtree_unreachable(VALUE self, VALUE limit)
{
    rb_handle *t = handle_get(self, &domtree_type);
    const hscope_id *ids;
    uint64_t n;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_domtree_unreachable(t->ptr, &ids, &n, &err);
    if (st != HSCOPE_OK)
        raise_status(st, &err);
    if (!NIL_P(limit) && (uint64_t)NUM2ULL(limit) < n)
        n = NUM2ULL(limit);
    return ids_to_ary(ids, n);
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
    rb_handle *p = handle_get(self, &paths_type);
    hscope_id id = id_arg(p->heap, vid);
    uint64_t len = hscope_paths_get(p->ptr, id, NULL, 0, NULL);
    if (!len)
        return Qnil;
    VALUE tmp;
    hscope_id *buf = ALLOCV_N(hscope_id, tmp, len);
    int32_t cat = -1;
    len = hscope_paths_get(p->ptr, id, buf, len, &cat);
    VALUE r = rb_assoc_new(root_name(p->heap, cat), ids_to_ary(buf, len));
    ALLOCV_END(tmp);
    return r;
}

/* ------------------------------------------------------------------ */
/* reports: the library's writers into a String or an IO (issue 20)   */
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

typedef struct rb_sink {
    char *buf;             /* malloc'd: no GVL when it grows */
    size_t len, cap;
    VALUE io;              /* Qnil: collect the whole output */
    uint64_t written;      /* bytes handed to io.write */
    int nomem;             /* the buffer could not grow */
    int state;             /* rb_protect state of io.write */
    atomic_int cancel;     /* set by the unblock function */
} rb_sink;

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

enum { W_SUMMARY, W_OBJECTS, W_GENERATIONS, W_TALLY, W_DIFF, W_DOMTREE, W_RETAINED,
       W_PATHS, W_SUSPECTS,
       W_TIMELINE, W_EXPORT /* the timeline section */, W_HTML /* the HTML report */ };

/* One writer call: which writer, its arguments and options, the sink. */
typedef struct write_job {
    int what;
    void *handle;                 /* the result written */
    const hscope_tally_t *groups; /* W_DIFF: the diff's tally, or NULL */
    hscope_id focus;              /* W_DOMTREE */
    const void *items;            /* W_OBJECTS: addresses; W_PATHS: ids */
    uint64_t nitems;
    VALUE opts;
    hscope_report_options ro;
    rb_sink sink;
    hscope_error err;
    hscope_status st;
} write_job;

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
static const char **
cstr_array(VALUE ary, VALUE *keep, uint64_t *n_out)
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

/* The dump names (names: [String or nil, ...]) as a C array (cstr_array). */
static void
ropt_names(VALUE opts, hscope_report_options *ro, VALUE *keep)
{
    VALUE names = ropt(opts, "names");
    if (names == Qundef || NIL_P(names))
        return;
    ro->dump_names = cstr_array(names, keep, &ro->dump_name_count);
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
        { "bars", HSCOPE_REPORT_BARS },
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
            rb_raise(eStatus[HSCOPE_ERR_CANCELLED], "report cancelled after %llu bytes",
                     (unsigned long long)s->written);
    }
    RB_GC_GUARD(keep[0]);
    RB_GC_GUARD(keep[1]);
    if (j->st != HSCOPE_OK) {
        if (s->nomem)
            rb_memerror();
        raise_status(j->st, &j->err);
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

static void
write_job_init(write_job *j, int what, void *handle)
{
    memset(j, 0, sizeof(*j));
    j->what = what;
    j->handle = handle;
    j->focus = HSCOPE_ID_NONE;
}

/* Run the job of `self`'s method (self, and so its handle, kept alive;
 * the other arguments are on the VM stack of the call). */
static VALUE
write_run(VALUE self, write_job *j, VALUE opts)
{
    VALUE r = run_write(j, opts);
    RB_GC_GUARD(self);
    return r;
}

/* A writer whose only argument is the result: `self`'s handle. */
static VALUE
write_handle(VALUE self, int what, void *handle, VALUE opts)
{
    write_job j;
    write_job_init(&j, what, handle);
    return write_run(self, &j, opts);
}

/* A writer of some objects of `heap`: addresses (W_OBJECTS: uint64_t,
 * looked up by the writer) or ids (W_PATHS: hscope_id, checked here),
 * copied into a buffer that the stack holds (pinned) while it writes. */
static VALUE
write_items(VALUE self, int what, void *handle, const hscope_heap_t *heap, VALUE ary, VALUE opts)
{
    Check_Type(ary, T_ARRAY);
    long n = RARRAY_LEN(ary);
    int ids = what == W_PATHS;
    VALUE buf = rb_str_buf_new(n * (long)(ids ? sizeof(hscope_id) : sizeof(uint64_t)));
    for (long i = 0; i < n; i++) {
        if (ids)
            ((hscope_id *)RSTRING_PTR(buf))[i] = id_arg(heap, RARRAY_AREF(ary, i));
        else
            ((uint64_t *)RSTRING_PTR(buf))[i] = NUM2ULL(RARRAY_AREF(ary, i));
    }
    write_job j;
    write_job_init(&j, what, handle);
    j.items = RSTRING_PTR(buf);
    j.nitems = (uint64_t)n;
    VALUE r = write_run(self, &j, opts);
    RB_GC_GUARD(buf);
    return r;
}

/* Heap#_write_summary(opts) -> String (or the io: given) */
static VALUE
heap_write_summary(VALUE self, VALUE opts)
{
    return write_handle(self, W_SUMMARY, heap_get(self), opts);
}

/* Heap#_write_generations(opts) */
static VALUE
heap_write_generations(VALUE self, VALUE opts)
{
    return write_handle(self, W_GENERATIONS, heap_get(self), opts);
}

/* Heap#_write_objects(addresses, opts): show; an address that is not an
 * object of the heap is written as not found. */
static VALUE
heap_write_objects(VALUE self, VALUE addrs, VALUE opts)
{
    hscope_heap_t *h = heap_get(self);
    return write_items(self, W_OBJECTS, h, h, addrs, opts);
}

/* Native::Tally#_write(opts): a tally of a heap or of a dominator tree
 * (retained by key). */
static VALUE
tally_write(VALUE self, VALUE opts)
{
    return write_handle(self, W_TALLY, handle_get(self, &tally_type)->ptr, opts);
}

/* Diff#_write(groups, opts): the diff with groups, a Native::Tally of
 * Diff#_tally on this diff (nil: by file:line:class). */
static VALUE
diff_write(VALUE self, VALUE groups, VALUE opts)
{
    write_job j;
    write_job_init(&j, W_DIFF, diff_get(self));
    if (!NIL_P(groups)) {
        rb_handle *g = handle_get(groups, &tally_type);
        if (g->parent != self)
            rb_raise(rb_eArgError, "the groups are not of this diff");
        j.groups = g->ptr;
    }
    return write_run(self, &j, opts);
}

/* DominatorTree#_write(focus id or nil, opts) */
static VALUE
domtree_write(VALUE self, VALUE focus, VALUE opts)
{
    rb_handle *t = handle_get(self, &domtree_type);
    write_job j;
    write_job_init(&j, W_DOMTREE, t->ptr);
    if (!NIL_P(focus))
        j.focus = id_arg(t->heap, focus);
    return write_run(self, &j, opts);
}

/* DominatorTree#_write_retained(opts) */
static VALUE
domtree_write_retained(VALUE self, VALUE opts)
{
    return write_handle(self, W_RETAINED, tree_get(self), opts);
}

/* Native::Paths#_write(ids, opts): root paths to the objects. */
static VALUE
paths_write(VALUE self, VALUE ids, VALUE opts)
{
    rb_handle *p = handle_get(self, &paths_type);
    return write_items(self, W_PATHS, p->ptr, p->heap, ids, opts);
}

/* ---- suspects and retained-by-key: analyses made for the writers ---- */

HANDLE_TYPE(suspects_type, "Heapscope::Native::Suspects");
static void free_suspects(void *p) { hscope_suspects_free(p); }

typedef struct report_analysis {
    rb_handle *out;
    hscope_diff_t *diff;
    hscope_domtree_t *tree;
    const char *key;
    hscope_tally_options topts;
    hscope_dom_options dopts;
    hscope_error err;
    hscope_status st;
} report_analysis;

static void *
suspects_nogvl(void *p)
{
    report_analysis *a = p;
    hscope_suspects_t *s = NULL;
    a->st = hscope_suspects_compute(&s, a->diff, &a->dopts, &a->err);
    a->out->ptr = s;
    return NULL;
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

static void
run_report_analysis(report_analysis *a, void *(*fn)(void *))
{
    hscope_error_init(&a->err);
    rb_thread_call_without_gvl(fn, a, NULL, NULL);
    if (a->st != HSCOPE_OK)
        raise_status(a->st, &a->err);
}

/* Diff#_suspects(class_edges) -> Native::Suspects: the diff's holders,
 * ranked, with a path from a root to each (its own dominator tree). */
static VALUE
diff_suspects(VALUE self, VALUE class_edges)
{
    rb_handle *d = handle_get(self, &diff_type);
    report_analysis a;
    memset(&a, 0, sizeof(a));
    a.diff = d->ptr;
    dom_opts(&a.dopts, class_edges);
    VALUE obj = handle_new(cSuspects, &suspects_type, free_suspects, self, d->heap);
    a.out = DATA_PTR(obj);
    run_report_analysis(&a, suspects_nogvl);
    /* a dominator tree (16 bytes per object) and paths (4) */
    handle_account(a.out, hscope_heap_object_count(d->heap) * 20);
    return obj;
}

/* Native::Suspects#_write(opts) */
static VALUE
suspects_write(VALUE self, VALUE opts)
{
    return write_handle(self, W_SUSPECTS, handle_get(self, &suspects_type)->ptr, opts);
}

/* DominatorTree#_tally(key, top, sort) -> Native::Tally: what each group
 * keeps alive (hscope_domtree_tally). */
static VALUE
domtree_tally(VALUE self, VALUE key, VALUE top, VALUE sort)
{
    rb_handle *t = handle_get(self, &domtree_type);
    report_analysis a;
    memset(&a, 0, sizeof(a));
    a.tree = t->ptr;
    key = tally_args(key, top, sort, &a.key, &a.topts);
    VALUE obj = handle_new(cTally, &tally_type, free_tally, self, t->heap);
    a.out = DATA_PTR(obj);
    run_report_analysis(&a, domtree_tally_nogvl);
    handle_account(a.out, hscope_tally_row_count(a.out->ptr) * 48);
    RB_GC_GUARD(key);
    return obj;
}

/* Native::Tally#by -> the key the tally groups by */
static VALUE
tally_by(VALUE self)
{
    return cstr_or_nil(hscope_tally_by(handle_get(self, &tally_type)->ptr));
}

static void
init_reports(void)
{
    cSuspects = rb_define_class_under(mNative, "Suspects", rb_cObject);
    rb_undef_alloc_func(cSuspects);
    rb_define_method(cSuspects, "_write", suspects_write, 1);
    rb_define_method(cHeap, "_write_summary", heap_write_summary, 1);
    rb_define_method(cHeap, "_write_generations", heap_write_generations, 1);
    rb_define_method(cHeap, "_write_objects", heap_write_objects, 2);
    rb_define_method(cTally, "_write", tally_write, 1);
    rb_define_method(cTally, "by", tally_by, 0);
    rb_define_method(cDiff, "_write", diff_write, 2);
    rb_define_method(cDiff, "_suspects", diff_suspects, 1);
    rb_define_method(cDomTree, "_write", domtree_write, 2);
    rb_define_method(cDomTree, "_write_retained", domtree_write_retained, 1);
    rb_define_method(cDomTree, "_tally", domtree_tally, 3);
    rb_define_method(cPaths, "_write", paths_write, 2);
}

/* ------------------------------------------------------------------ */
/* many dumps: timeline (and diff --grew), histogram, export          */
/* ------------------------------------------------------------------ */

/*
 * Calls that read dump files themselves (streamed: no heap is loaded):
 * Heapscope.timeline and .grew (hscope_timeline_compute), .histogram
 * (hscope_tally_file), .export (hscope_export_files).  They run without
 * the GVL like a load, cancellable through the load's progress callback;
 * their results are written by the library's writers (write jobs above).
 */

HANDLE_TYPE(timeline_type, "Heapscope::Timeline");
HANDLE_TYPE(export_type, "Heapscope::Export");
static void free_timeline(void *p) { hscope_timeline_free(p); }
static void free_export(void *p) { hscope_export_free(p); }
static VALUE cTimeline, cExport;

/* Run `x` (what and options set) on the dump files `paths` (an Array of
 * Strings, or nil when x->pa names the one dump) with the load options
 * `opts` (strict:, max_memory:, progress: ...): without the GVL, Ctrl-C
 * and Thread#raise stop it; the result goes into a new `klass` handle,
 * which refers to no heap. */
static VALUE
files_call(VALUE klass, const rb_data_type_t *type, void (*free_fn)(void *), analysis_args *x,
           VALUE paths, VALUE opts)
{
    load_args l;
    memset(&l, 0, sizeof(l));
    VALUE keep[2] = { Qnil, Qnil };
    if (!NIL_P(paths)) {
        x->paths = cstr_array(paths, keep, &x->npaths);
        for (uint64_t i = 0; i < x->npaths; i++)
            if (!x->paths[i])
                rb_raise(rb_eTypeError, "paths: nil is not a path");
    }
    load_options_from(opts, &l.opts);
    l.progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    x->load = &l;
    VALUE obj = handle_new(klass, type, free_fn, Qfalse, NULL);
    x->out = DATA_PTR(obj);
    run_analysis(x);
    RB_GC_GUARD(keep[0]);
    RB_GC_GUARD(keep[1]);
    RB_GC_GUARD(l.progress);
    return obj;
}

/* Timeline._compute(paths, load_opts, by, metric, order, flags, threads,
 * min_dumps): metric, order and flags are the library's codes
 * (HSCOPE_METRIC_*, HSCOPE_ORDER_*, HSCOPE_TIMELINE_*); by, threads and
 * min_dumps nil for the defaults. */
static VALUE
timeline_s_compute(int argc, VALUE *argv, VALUE klass)
{
    VALUE paths, opts, by, metric, order, flags, threads, min_dumps;
    rb_scan_args(argc, argv, "8", &paths, &opts, &by, &metric, &order, &flags, &threads,
                 &min_dumps);
    analysis_args x;
    memset(&x, 0, sizeof(x));
    hscope_timeline_options_init(&x.lopts);
    if (!NIL_P(by)) {
        by = rb_str_new_frozen(StringValue(by));
        x.lopts.by = StringValueCStr(by);
    }
    x.lopts.metric = NUM2INT(metric);
    x.lopts.order = NUM2INT(order);
    x.lopts.flags = NUM2UINT(flags);
    x.lopts.threads = NIL_P(threads) ? 0 : NUM2UINT(threads);
    x.lopts.min_dumps = NIL_P(min_dumps) ? 0 : NUM2UINT(min_dumps);
    if (!NIL_P(opts) && !NIL_P(rb_hash_lookup(opts, ID2SYM(rb_intern("progress"))))) {
        /* the proc runs with the GVL, which only this thread may take:
         * the dumps are folded one at a time, on this thread */
        if (x.lopts.threads > 1)
            rb_raise(rb_eArgError, "threads: a progress proc needs the dumps folded one at a "
                                   "time (threads: 1 or nil)");
        x.lopts.threads = 1;
    }
    x.what = AN_TIMELINE;
    VALUE obj = files_call(klass, &timeline_type, free_timeline, &x, paths, opts);
    rb_handle *h = DATA_PTR(obj);
    handle_account(h, hscope_timeline_group_count(h->ptr) *
                          (hscope_timeline_dump_count(h->ptr) * 16 + 64));
    RB_GC_GUARD(by);
    return obj;
}

static const hscope_timeline_t *
timeline_get(VALUE self)
{
    return handle_get(self, &timeline_type)->ptr;
}

static VALUE
timeline_by(VALUE self)
{
    return cstr_or_nil(hscope_timeline_by(timeline_get(self)));
}

/* :memsize or :count: the series that was fitted and ranked */
static VALUE
timeline_metric(VALUE self)
{
    int32_t m = hscope_timeline_metric(timeline_get(self));
    return ID2SYM(rb_intern(m == HSCOPE_METRIC_COUNT ? "count" : "memsize"));
}

static VALUE
timeline_order(VALUE self)
{
    return cstr_or_nil(hscope_timeline_order(timeline_get(self)));
}

static VALUE
timeline_order_source(VALUE self)
{
    return cstr_or_nil(hscope_timeline_order_source(timeline_get(self)));
}

static VALUE
timeline_times_known(VALUE self)
{
    return hscope_timeline_times_known(timeline_get(self)) ? Qtrue : Qfalse;
}

static VALUE
timeline_dump_count(VALUE self)
{
    return ULL2NUM(hscope_timeline_dump_count(timeline_get(self)));
}

static VALUE
timeline_group_count(VALUE self)
{
    return ULL2NUM(hscope_timeline_group_count(timeline_get(self)));
}

static VALUE
timeline_growing_count(VALUE self)
{
    return ULL2NUM(hscope_timeline_growing_count(timeline_get(self)));
}

static VALUE
timeline_warning_bits(VALUE self)
{
    return UINT2NUM(hscope_timeline_warnings(timeline_get(self)));
}

/* A fixed-point value of the library, nil for HSCOPE_NO_VALUE. */
static VALUE
fixed_or_nil(int64_t v)
{
    return v == HSCOPE_NO_VALUE ? Qnil : LL2NUM(v);
}

/* Timeline#_dump(i) -> [path, index among the paths given, time in ms or
 * nil, count, memsize, dumper objects left out, objects of the dump] */
static VALUE
timeline_dump(VALUE self, VALUE vi)
{
    const hscope_timeline_t *tl = timeline_get(self);
    uint64_t i = NUM2ULL(vi);
    uint64_t count = 0, memsize = 0;
    if (hscope_timeline_dump_totals(tl, i, &count, &memsize) != HSCOPE_OK)
        rb_raise(rb_eIndexError, "no dump %llu", (unsigned long long)i);
    hscope_load_stats st = HSCOPE_LOAD_STATS_INIT;
    hscope_timeline_dump_stats(tl, i, &st);
    VALUE r = rb_ary_new_from_args(
        7, cstr_or_nil(hscope_timeline_dump_path(tl, i)), ULL2NUM(hscope_timeline_dump_given(tl, i)),
        fixed_or_nil(hscope_timeline_dump_time_ms(tl, i)), ULL2NUM(count), ULL2NUM(memsize),
        ULL2NUM(hscope_timeline_dump_excluded(tl, i)), ULL2NUM(st.objects));
    RB_GC_GUARD(self);
    return r;
}

static VALUE
u64_ary(const uint64_t *v, uint64_t n)
{
    VALUE r = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++)
        rb_ary_push(r, ULL2NUM(v[i]));
    return r;
}

/* Timeline#_group(g) -> [key, count per dump, memsize per dump, slope per
 * step (thousandths), slope per hour (thousandths), R^2 (millionths),
 * mean (thousandths), rise (thousandths), growing]; nil past the end. */
static VALUE
timeline_group(VALUE self, VALUE vg)
{
    const hscope_timeline_t *tl = timeline_get(self);
    uint64_t g = NUM2ULL(vg), n = hscope_timeline_dump_count(tl);
    int64_t step, hour, r2, mean, rise;
    if (hscope_timeline_group_fit(tl, g, &step, &hour, &r2, &mean, &rise) != HSCOPE_OK)
        return Qnil;
    VALUE r = rb_ary_new_from_args(
        9, cstr_or_nil(hscope_timeline_group_key(tl, g)),
        u64_ary(hscope_timeline_group_series(tl, g, HSCOPE_METRIC_COUNT), n),
        u64_ary(hscope_timeline_group_series(tl, g, HSCOPE_METRIC_MEMSIZE), n), fixed_or_nil(step),
        fixed_or_nil(hour), fixed_or_nil(r2), fixed_or_nil(mean), fixed_or_nil(rise),
        hscope_timeline_group_growing(tl, g) ? Qtrue : Qfalse);
    RB_GC_GUARD(self);
    return r;
}

/* Timeline#_write(opts) */
static VALUE
timeline_write(VALUE self, VALUE opts)
{
    return write_handle(self, W_TIMELINE, handle_get(self, &timeline_type)->ptr, opts);
}

/* Native::Tally._file(path, load_opts, key, top, sort, keep_dumper): the
 * dump folded into a tally without building its graph (the histogram). */
static VALUE
tally_s_file(int argc, VALUE *argv, VALUE klass)
{
    VALUE path, opts, key, top, sort, keep_dumper;
    rb_scan_args(argc, argv, "6", &path, &opts, &key, &top, &sort, &keep_dumper);
    analysis_args x;
    memset(&x, 0, sizeof(x));
    FilePathValue(path);
    path = rb_str_new_frozen(path);
    x.pa = StringValueCStr(path);
    key = tally_args(key, top, sort, &x.key, &x.topts);
    if (!RTEST(keep_dumper))
        x.topts.flags |= HSCOPE_TALLY_SKIP_DUMPER;
    x.what = AN_TALLY_FILE;
    VALUE obj = files_call(klass, &tally_type, free_tally, &x, Qnil, opts);
    rb_handle *h = DATA_PTR(obj);
    handle_account(h, hscope_tally_row_count(h->ptr) * 48);
    RB_GC_GUARD(path);
    RB_GC_GUARD(key);
    return obj;
}

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
    VALUE obj = files_call(klass, &export_type, free_export, &x, paths, opts);
    RB_GC_GUARD(dir);
    return obj;
}

static const hscope_export_t *
export_get(VALUE self)
{
    return handle_get(self, &export_type)->ptr;
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
    VALUE r = cstr_or_nil(hscope_export_dump_path(export_get(self), NUM2ULL(vi)));
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
    return write_handle(self, W_EXPORT, handle_get(self, &export_type)->ptr, opts);
}

static void
init_timeline(void)
{
    cTimeline = rb_define_class_under(mHeapscope, "Timeline", rb_cObject);
    rb_undef_alloc_func(cTimeline);
    rb_define_singleton_method(cTimeline, "_compute", timeline_s_compute, -1);
    rb_define_method(cTimeline, "by", timeline_by, 0);
    rb_define_method(cTimeline, "metric", timeline_metric, 0);
    rb_define_method(cTimeline, "order", timeline_order, 0);
    rb_define_method(cTimeline, "order_source", timeline_order_source, 0);
    rb_define_method(cTimeline, "times_known?", timeline_times_known, 0);
    rb_define_method(cTimeline, "dump_count", timeline_dump_count, 0);
    rb_define_method(cTimeline, "group_count", timeline_group_count, 0);
    rb_define_method(cTimeline, "growing_count", timeline_growing_count, 0);
    rb_define_method(cTimeline, "warning_bits", timeline_warning_bits, 0);
    rb_define_method(cTimeline, "_dump", timeline_dump, 1);
    rb_define_method(cTimeline, "_group", timeline_group, 1);
    rb_define_method(cTimeline, "_write", timeline_write, 1);
    rb_define_singleton_method(cTally, "_file", tally_s_file, -1);
    cExport = rb_define_class_under(mHeapscope, "Export", rb_cObject);
    rb_undef_alloc_func(cExport);
    rb_define_singleton_method(cExport, "_files", export_s_files, -1);
    rb_define_method(cExport, "dump_count", export_dump_count, 0);
    rb_define_method(cExport, "_dump_path", export_dump_path, 1);
    rb_define_method(cExport, "_totals", export_totals, 0);
    rb_define_method(cExport, "_write", export_write, 1);
}

/* ------------------------------------------------------------------ */
/* the HTML report (issue 20, part C2)                                 */
/* ------------------------------------------------------------------ */

/*
 * Heapscope.report: hscope_html_report_compute() on the dump files (without
 * the GVL, as a timeline; Ctrl-C stops its loads and folds), then the page
 * by hscope_html_report_write() through the write job's sink (a String or
 * io:), then the report freed at once: it holds the last dump's heap.
 */
HANDLE_TYPE(html_type, "Heapscope::Native::HtmlReport");
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
    VALUE obj = files_call(klass, &html_type, free_html, &x, paths, opts);
    RB_GC_GUARD(by);
    RB_GC_GUARD(title);
    return obj;
}

/* HtmlReport#_write(opts): the page (opts: format: :html, top:, io:). */
static VALUE
html_write(VALUE self, VALUE opts)
{
    return write_handle(self, W_HTML, handle_get(self, &html_type)->ptr, opts);
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

static void
init_html(void)
{
    cHtmlReport = rb_define_class_under(mNative, "HtmlReport", rb_cObject);
    rb_undef_alloc_func(cHtmlReport);
    rb_define_singleton_method(cHtmlReport, "_compute", html_s_compute, 6);
    rb_define_method(cHtmlReport, "_write", html_write, 1);
    rb_define_method(cHtmlReport, "_free", html_free, 0);
}

/* ------------------------------------------------------------------ */
/* module                                                             */
/* ------------------------------------------------------------------ */

/* ---- Waste ---- */

/* waste options from Ruby: by (:site / "file:line" / :gem), keep_dumper,
 * ratio, min_slack */
static void
waste_opts(hscope_waste_options *o, VALUE by, VALUE keep_dumper, VALUE ratio, VALUE min_slack)
{
    hscope_waste_options_init(o);
    if (!NIL_P(by)) {
        VALUE s = rb_String(by);
        const char *b = StringValueCStr(s);
        if (strcmp(b, "gem") == 0)
            o->by = HSCOPE_WASTE_BY_GEM;
        else if (strcmp(b, "file:line") != 0 && strcmp(b, "site") != 0)
            rb_raise(rb_eArgError, "by: must be \"file:line\" (or :site) or :gem");
    }
    if (RTEST(keep_dumper))
        o->flags |= HSCOPE_WASTE_KEEP_DUMPER;
    if (!NIL_P(ratio)) {
        long r = NUM2LONG(ratio);
        if (r < 2 || r > 1000000)
            rb_raise(rb_eArgError, "ratio: must be from 2 to 1000000");
        o->ratio = (uint32_t)r;
    }
    if (!NIL_P(min_slack)) {
        long long m = NUM2LL(min_slack);
        if (m < 1)
            rb_raise(rb_eArgError, "min_slack: must be at least 1");
        o->min_slack = (uint64_t)m;
    }
}

static void
waste_account(rb_handle *h)
{
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    hscope_waste_totals_get(h->ptr, &t);
    handle_account(h, t.group_count * 160 + hscope_waste_value_count(h->ptr) * 128);
}

/* Waste._file(path, load_opts, by, keep_dumper, ratio, min_slack): the
 * dump streamed (no heap is loaded); cancellable like a load. */
static VALUE
waste_s_file(VALUE klass, VALUE path, VALUE opts, VALUE by, VALUE keep_dumper, VALUE ratio,
             VALUE min_slack)
{
    analysis_args x;
    load_args l;
    memset(&x, 0, sizeof(x));
    memset(&l, 0, sizeof(l));
    FilePathValue(path);
    path = rb_str_new_frozen(path);
    x.pa = StringValueCStr(path);
    load_options_from(opts, &l.opts);
    l.progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    x.load = &l;
    waste_opts(&x.wopts, by, keep_dumper, ratio, min_slack);
    VALUE obj = handle_new(klass, &waste_type, free_waste, Qfalse, NULL);
    x.out = DATA_PTR(obj);
    x.what = AN_WASTE_FILE;
    run_analysis(&x);
    waste_account(x.out);
    RB_GC_GUARD(path);
    RB_GC_GUARD(l.progress);
    return obj;
}

/* Heap#_waste(by, keep_dumper, ratio, min_slack): from the loaded heap
 * (the result keeps no reference to it). */
static VALUE
heap_waste(VALUE self, VALUE by, VALUE keep_dumper, VALUE ratio, VALUE min_slack)
{
    analysis_args x;
    memset(&x, 0, sizeof(x));
    x.cheap = heap_get(self);
    waste_opts(&x.wopts, by, keep_dumper, ratio, min_slack);
    VALUE obj = handle_new(cWaste, &waste_type, free_waste, Qfalse, NULL);
    x.out = DATA_PTR(obj);
    x.what = AN_WASTE_HEAP;
    run_analysis(&x);
    waste_account(x.out);
    RB_GC_GUARD(self);
    return obj;
}

static const hscope_waste_t *
waste_get(VALUE self)
{
    return handle_get(self, &waste_type)->ptr;
}

static void
hset(VALUE h, const char *k, uint64_t v)
{
    rb_hash_aset(h, ID2SYM(rb_intern(k)), ULL2NUM(v));
}

/* Waste#_totals -> Hash of counts (symbols), warnings as bits */
static VALUE
waste_totals(VALUE self)
{
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    hscope_waste_totals_get(waste_get(self), &t);
    VALUE h = rb_hash_new();
    hset(h, "objects", t.objects);
    hset(h, "memsize", t.memsize);
    hset(h, "count", t.count);
    hset(h, "saving", t.saving);
    hset(h, "duplicate_count", t.duplicate_count);
    hset(h, "duplicate_saving", t.duplicate_saving);
    hset(h, "duplicate_values", t.duplicate_values);
    hset(h, "duplicate_copies", t.duplicate_copies);
    hset(h, "empty_count", t.empty_count);
    hset(h, "empty_saving", t.empty_saving);
    hset(h, "oversized_count", t.oversized_count);
    hset(h, "oversized_saving", t.oversized_saving);
    hset(h, "shared_count", t.shared_count);
    hset(h, "shared_memsize", t.shared_memsize);
    hset(h, "no_value_count", t.no_value_count);
    hset(h, "no_value_memsize", t.no_value_memsize);
    hset(h, "truncated_count", t.truncated_count);
    hset(h, "truncated_memsize", t.truncated_memsize);
    hset(h, "collision_count", t.collision_count);
    hset(h, "excluded", t.excluded);
    hset(h, "untraced", t.untraced);
    hset(h, "group_count", t.group_count);
    hset(h, "dump_objects", t.dump_objects);
    hset(h, "warnings", t.warnings);
    return h;
}

static VALUE
kind_sym(int32_t kind)
{
    return ID2SYM(rb_intern(kind == HSCOPE_WASTE_DUPLICATE ? "duplicate"
                            : kind == HSCOPE_WASTE_EMPTY   ? "empty"
                                                           : "oversized"));
}

/* Waste#_rows -> [[key, kind, type, count, saving, memsize, copies, frozen,
 * fstring, buffer, used, fix, [[value index, copies, saving], ...]], ...] */
static VALUE
waste_rows(VALUE self)
{
    const hscope_waste_t *w = waste_get(self);
    uint64_t n = hscope_waste_row_count(w);
    VALUE rows = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++) {
        hscope_waste_row r = { .size = sizeof(r) };
        hscope_waste_row_get(w, i, &r);
        VALUE vals = rb_ary_new_capa((long)r.values);
        for (uint64_t j = 0; j < r.values; j++) {
            uint64_t v, c, s;
            if (hscope_waste_row_value(w, i, j, &v, &c, &s) == HSCOPE_OK)
                rb_ary_push(vals, rb_ary_new_from_args(3, ULL2NUM(v), ULL2NUM(c), ULL2NUM(s)));
        }
        const char *type = r.type == HSCOPE_TYPE_ARRAY ? "ARRAY"
                           : r.type == HSCOPE_TYPE_HASH ? "HASH" : "STRING";
        VALUE row = rb_ary_new_from_args(
            13, rb_str_new_cstr(r.key), kind_sym(r.kind), rb_str_new_cstr(type),
            ULL2NUM(r.count), ULL2NUM(r.saving), ULL2NUM(r.memsize), ULL2NUM(r.copies),
            ULL2NUM(r.frozen), ULL2NUM(r.fstring), ULL2NUM(r.buffer), ULL2NUM(r.used),
            rb_str_new_cstr(r.fix), vals);
        rb_ary_push(rows, row);
    }
    return rows;
}

/* Waste#_values -> [[hash, length, bytes, copies, memsize, saving, frozen,
 * fstring, [[key, copies, saving], ...]], ...] */
static VALUE
waste_values(VALUE self)
{
    const hscope_waste_t *w = waste_get(self);
    uint64_t n = hscope_waste_value_count(w);
    VALUE out = rb_ary_new_capa((long)n);
    for (uint64_t i = 0; i < n; i++) {
        hscope_waste_value v = { .size = sizeof(v) };
        hscope_waste_value_get(w, i, &v);
        VALUE sites = rb_ary_new_capa((long)v.sites);
        for (uint64_t j = 0; j < v.sites; j++) {
            const char *key;
            uint64_t c, s;
            if (hscope_waste_value_site(w, i, j, &key, &c, &s) == HSCOPE_OK)
                rb_ary_push(sites, rb_ary_new_from_args(3, rb_str_new_cstr(key), ULL2NUM(c),
                                                        ULL2NUM(s)));
        }
        VALUE row = rb_ary_new_from_args(
            9, ULL2NUM(v.hash), ULL2NUM(v.length), rb_str_new(v.data, (long)v.length),
            ULL2NUM(v.copies), ULL2NUM(v.memsize), ULL2NUM(v.saving), ULL2NUM(v.frozen),
            ULL2NUM(v.fstring), sites);
        rb_ary_push(out, row);
    }
    return out;
}

/* The library writers' output, appended to a Ruby String. */
static int32_t
append_to_string(void *ud, const char *data, uint64_t len)
{
    rb_str_cat(*(VALUE *)ud, data, (long)len);
    return 0;
}

/* Waste#_report(format, flags, top, width, name) -> String */
static VALUE
waste_report(VALUE self, VALUE format, VALUE flags, VALUE top, VALUE width, VALUE name)
{
    const hscope_waste_t *w = waste_get(self);
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = NUM2INT(format);
    ro.flags = NUM2UINT(flags);
    long long t = NUM2LL(top);
    ro.top = t <= 0 ? HSCOPE_TOP_ALL : (uint64_t)t;
    ro.width = NIL_P(width) ? 0 : NUM2UINT(width);
    const char *names[1] = { NULL };
    if (!NIL_P(name)) {
        name = rb_str_new_frozen(StringValue(name));
        names[0] = StringValueCStr(name);
        ro.dump_names = names;
        ro.dump_name_count = 1;
    }
    VALUE out = rb_str_buf_new(4096);
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_waste_write(w, &ro, append_to_string, &out, &err);
    RB_GC_GUARD(name);
    if (st != HSCOPE_OK)
        raise_status(st, &err);
    rb_enc_associate(out, rb_utf8_encoding());
    return out;
}

static VALUE
define_error(const char *name, VALUE super, hscope_status st)
{
    VALUE k = rb_define_class_under(mHeapscope, name, super);
    if (st > 0)
        eStatus[st] = k;
    return k;
}

RUBY_FUNC_EXPORTED void
Init_heapscope(void)
{
    mHeapscope = rb_define_module("Heapscope");
    mNative = rb_define_module_under(mHeapscope, "Native");

    rb_define_const(mHeapscope, "LIBRARY_VERSION", rb_str_freeze(rb_str_new_cstr(hscope_version_string())));
    rb_define_const(mHeapscope, "LIBRARY_VERSION_NUMBER", UINT2NUM(hscope_version_number()));
    rb_define_const(mHeapscope, "HEADER_VERSION", rb_str_freeze(rb_str_new_cstr(HSCOPE_VERSION_STRING)));

    /* Errors: one class per hscope_status. */
    eError = rb_define_class_under(mHeapscope, "Error", rb_eStandardError);
    define_error("InvalidArgumentError", eError, HSCOPE_ERR_INVALID_ARG);
    define_error("OutOfMemoryError", eError, HSCOPE_ERR_NOMEM);
    define_error("IOError", eError, HSCOPE_ERR_IO);
    VALUE eParse = define_error("ParseError", eError, HSCOPE_ERR_PARSE);
    define_error("NotADumpError", eError, HSCOPE_ERR_NOT_A_DUMP);
    define_error("GzipError", eError, HSCOPE_ERR_GZIP);
    define_error("LimitError", eError, HSCOPE_ERR_LIMIT);
    define_error("CancelledError", eError, HSCOPE_ERR_CANCELLED);
    define_error("NotFoundError", eError, HSCOPE_ERR_NOT_FOUND);
    define_error("UnsupportedError", eError, HSCOPE_ERR_UNSUPPORTED);
    define_error("TruncatedError", eParse, HSCOPE_ERR_TRUNCATED);
    define_error("InternalError", eError, HSCOPE_ERR_INTERNAL);

    cHeap = rb_define_class_under(mHeapscope, "Heap", rb_cObject);
    rb_undef_alloc_func(cHeap);
    rb_define_singleton_method(cHeap, "_new_empty", heap_s_new_empty, 0);
    rb_define_singleton_method(cHeap, "_open_file", heap_s_open_file, 2);
    rb_define_singleton_method(cHeap, "_open_io", heap_s_open_io, 2);
    rb_define_singleton_method(cHeap, "_open_memory", heap_s_open_memory, 2);
    rb_define_method(cHeap, "object_count", heap_object_count, 0);
    rb_define_method(cHeap, "reference_count", heap_reference_count, 0);
    rb_define_method(cHeap, "dangling_count", heap_dangling_count, 0);
    rb_define_method(cHeap, "stats", heap_stats, 0);
    rb_define_method(cHeap, "skipped", heap_skipped, 0);
    rb_define_method(cHeap, "skipped_lines", heap_skipped_lines, 0);
    rb_define_method(cHeap, "_roots", heap_roots, 0);
    rb_define_method(cHeap, "_find", heap_find, 1);
    rb_define_method(cHeap, "_address", heap_address, 1);
    rb_define_method(cHeap, "_info", heap_info, 1);
    rb_define_method(cHeap, "_refs", heap_refs, 1);
    rb_define_method(cHeap, "_referrers", heap_referrers, 1);
    rb_define_method(cHeap, "_value", heap_value, 1);
    rb_define_method(cHeap, "_column", heap_column, 1);
    rb_define_method(cHeap, "_type_name", heap_type_name, 1);
    rb_define_method(cHeap, "_tally", heap_tally, 4);
    rb_define_method(cHeap, "_dominators", heap_dominators, 1);
    rb_define_method(cHeap, "_paths", heap_paths, 1);

    cLoader = rb_define_class_under(mNative, "Loader", rb_cObject);
    rb_undef_alloc_func(cLoader);
    rb_define_singleton_method(cLoader, "start", loader_s_start, 2);
    rb_define_method(cLoader, "finish", loader_finish, -1);
    rb_define_method(cLoader, "cancel", loader_cancel, 0);

    VALUE cGzipSink = rb_define_class_under(mNative, "GzipSink", rb_cObject);
    rb_undef_alloc_func(cGzipSink);
    rb_define_singleton_method(cGzipSink, "start", gzsink_s_start, 2);
    rb_define_method(cGzipSink, "finish", gzsink_finish, 0);

    cTally = rb_define_class_under(mNative, "Tally", rb_cObject);
    rb_undef_alloc_func(cTally);
    rb_define_method(cTally, "rows", tally_rows, 0);
    rb_define_method(cTally, "group_count", tally_group_count, 0);
    rb_define_method(cTally, "totals", tally_totals, 0);
    rb_define_method(cTally, "excluded", tally_excluded, 0);
    rb_define_method(cTally, "_row_addresses", tally_row_addresses, 2);

    cDiff = rb_define_class_under(mHeapscope, "Diff", rb_cObject);
    rb_undef_alloc_func(cDiff);
    rb_define_singleton_method(cDiff, "_compute", diff_s_compute, 5);
    rb_define_singleton_method(cDiff, "_files", diff_s_files, 6);
    rb_define_method(cDiff, "count", diff_count, 0);
    rb_define_method(cDiff, "memsize", diff_memsize, 0);
    rb_define_method(cDiff, "excluded", diff_excluded, 0);
    rb_define_method(cDiff, "reused_addresses", diff_reused, 0);
    rb_define_method(cDiff, "warning_bits", diff_warning_bits, 0);
    rb_define_method(cDiff, "warning_text", diff_warning_text, 0);
    rb_define_method(cDiff, "snapshot_objects", diff_snapshot_objects, 0);
    rb_define_method(cDiff, "heap", diff_heap, 0);
    rb_define_method(cDiff, "_addresses", diff_addresses, 1);
    rb_define_method(cDiff, "_tally", diff_tally, 3);

    cDomTree = rb_define_class_under(mHeapscope, "DominatorTree", rb_cObject);
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

    cPaths = rb_define_class_under(mNative, "Paths", rb_cObject);
    rb_undef_alloc_func(cPaths);
    rb_define_method(cPaths, "_path", paths_path, 1);

    cHolders = rb_define_class_under(mNative, "Holders", rb_cObject);
    rb_undef_alloc_func(cHolders);

    cWaste = rb_define_class_under(mHeapscope, "Waste", rb_cObject);
    rb_undef_alloc_func(cWaste);
    rb_define_singleton_method(cWaste, "_file", waste_s_file, 6);
    rb_define_method(cWaste, "_totals", waste_totals, 0);
    rb_define_method(cWaste, "_rows", waste_rows, 0);
    rb_define_method(cWaste, "_values", waste_values, 0);
    rb_define_method(cWaste, "_report", waste_report, 5);
    rb_define_method(cHeap, "_waste", heap_waste, 4);
    init_reports();
    init_timeline();
    init_html();
    hscope_rb_init_check(mHeapscope); /* rb_check.c */
}
