/*
 * rb_loader.c - Native::Loader and Native::GzipSink: a pipe read on a native thread.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/io.h>
#include <ruby/thread.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "rb_heapscope.h"

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
    t->fd = fcntl(hscope_rb_io_fd(io), F_DUPFD_CLOEXEC, 3);
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
    hscope_rb_load_options(opts, &s->opts);
    pipe_thread_start(&s->t, io, loader_main);
    return obj;
}

static loader_state *
loader_get(VALUE obj)
{
    rb_loader *l = rb_check_typeddata(obj, &loader_type);
    if (!l->s)
        rb_raise(hscope_rb_eError, "loader is not started");
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
        rb_raise(hscope_rb_eError, "loader already finished");
    VALUE obj = NIL_P(into) ? hscope_rb_heap_alloc(hscope_rb_cHeap) : into;
    if (hscope_rb_heap_data(obj)->heap)
        rb_raise(rb_eArgError, "heap already loaded");
    join_args j = { s, hscope_rb_heap_data(obj), child };
    rb_thread_call_without_gvl(loader_join_nogvl, &j, ubf_loader, &j);
    if (s->st != HSCOPE_OK)
        hscope_rb_raise_status(s->st, &s->err);
    hscope_rb_heap_account(j.target);
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
        rb_raise(hscope_rb_eError, "gzip sink is not started");
    if (s->t.joined)
        rb_raise(hscope_rb_eError, "gzip sink already finished");
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

void
hscope_rb_init_loader(VALUE mod)
{
    VALUE native = rb_define_module_under(mod, "Native");
    VALUE cLoader = rb_define_class_under(native, "Loader", rb_cObject);
    rb_undef_alloc_func(cLoader);
    rb_define_singleton_method(cLoader, "start", loader_s_start, 2);
    rb_define_method(cLoader, "finish", loader_finish, -1);
    rb_define_method(cLoader, "cancel", loader_cancel, 0);

    VALUE cGzipSink = rb_define_class_under(native, "GzipSink", rb_cObject);
    rb_undef_alloc_func(cGzipSink);
    rb_define_singleton_method(cGzipSink, "start", gzsink_s_start, 2);
    rb_define_method(cGzipSink, "finish", gzsink_finish, 0);
}
