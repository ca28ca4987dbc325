/*
 * test_handoff.c - the parallel parser under stress: every load
 * finishes, and gives exactly what one thread reading in order gives,
 * whatever the schedule, whatever the slot buffers held before, and even
 * when wakeups are lost.
 *
 * The internal library is built with HSCOPE_TEST_HOOKS (src/parse/parse.h):
 * the parser calls our hook wherever work passes between its threads.
 * There the hook yields, spins or sleeps at random (perturbing the
 * schedule), fills every slot-buffer byte the parse must not depend on
 * with garbage (stale bytes, as a reused buffer holds), and, in the "lost
 * wakeups" test, drops wakeups at random, as a faulty C library can
 * (glibc's pthread_cond_signal, sourceware bug 25847, is what once hung
 * fuzz_parse).
 *
 * Inputs: dump lines with an over-long line of every length around the
 * chunk size (the line limit is the read size when reading in order) at
 * every position of the first chunk, another later, and every ending (a
 * newline, none, cut inside a long line, cut inside a record).  Each is
 * parsed once by hscope__parse_stream (the reference) and then by
 * hscope__parse_parallel with 1-8 threads, lenient and strict, plain and
 * gzip, from memory, a file and a pipe (written in random pieces by
 * another thread), reading in order and in blocks; the status, the error
 * (line, offset, message) and the whole result as text must be equal.
 * Also the streaming fold (hscope_tally_file, the path of the hang), and
 * cancellation: a progress callback that stops the load at its Nth call,
 * or a flag set from another thread at a random moment (as Ruby's unblock
 * function does); a cancelled load returns HSCOPE_ERR_CANCELLED and
 * leaves nothing allocated.
 *
 * Every load runs under a watchdog (tests/watchdog.h): a load that has
 * not finished after 20 s prints every thread's stack and aborts.
 *
 * HEAPSCOPE_STRESS (default 1) multiplies the number of loads; the
 * default run is a few thousand loads, well under a minute.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define HSCOPE_TEST_HOOKS 1 /* as the internal library is built (meson.build) */
#include "heapscope/heapscope.h"
#include "../../src/io/reader.h"
#include "../../src/parse/parse.h"
#include "../builder_text.h"
#include "../watchdog.h"
#include "../zlib_oracle.h"

#define LOAD_SECONDS 20.0 /* the watchdog's limit for one load */

static double
stress(void)
{
    const char *e = getenv("HEAPSCOPE_STRESS");
    double s = e && *e ? strtod(e, NULL) : 1.0;
    return s > 0 ? s : 1.0;
}

/* Below 1, a sweep takes every (1 / stress)-th step; above, it runs
 * round(stress) times. */
static size_t
stride(void)
{
    double s = stress();
    return s < 1 ? (size_t)(1 / s + 0.5) : 1;
}

static int
rounds(void)
{
    double s = stress();
    return s < 1.5 ? 1 : (int)(s + 0.5);
}

/* ------------------------------------------------------------------ */
/* random numbers                                                     */
/* ------------------------------------------------------------------ */

static uint64_t
splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t main_rng = 25;

static uint32_t
rnd(uint32_t n)
{
    return (uint32_t)(splitmix(&main_rng) % n);
}

/* the hook runs on the parser's threads: one generator per thread */
static _Atomic uint64_t thread_seeds = 1;
static _Thread_local uint64_t thread_rng;

static uint32_t
trnd(uint32_t n)
{
    if (!thread_rng)
        thread_rng = atomic_fetch_add(&thread_seeds, 0x632BE59BD9B4E019ull);
    return (uint32_t)(splitmix(&thread_rng) % n);
}

/* ------------------------------------------------------------------ */
/* the hook                                                           */
/* ------------------------------------------------------------------ */

static struct {
    _Atomic int perturb;     /* 0: none; 1: yield; 2: yield, spin and sleep */
    _Atomic int poison;      /* fill the bytes the parse may not use */
    _Atomic unsigned drop;   /* drop one wakeup in `drop` (0: none) */
    _Atomic unsigned long calls, drops, timeouts, poisoned;
} H;

static void
garbage(uint8_t *p, size_t n)
{
    static const char *const junk[] = {
        "\"", "\\", " ", "0123456789", "\"address\":\"0x1\", \"type\":\"STRING\", ",
        "{\"flags\":{\"uncollectible\":true, \"wb_protected\":true", "\\u00", ",[{",
    };
    uint32_t k = trnd(9);
    if (k >= 7) { /* random bytes, newlines included */
        for (size_t i = 0; i < n; i++)
            p[i] = (uint8_t)trnd(256);
        return;
    }
    size_t m = strlen(junk[k]);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)junk[k][i % m];
}

/* Now and then give up the processor, spin a while, or sleep (up to
 * 200 us): rare enough that a load stays short, often enough that over
 * thousands of loads every handoff point is hit in every order. */
static void
perturb(int level)
{
    uint32_t r = trnd(256);
    if (r < 32) {
        sched_yield();
    } else if (level >= 2 && r < 36) {
        for (volatile uint32_t i = 0, n = trnd(20000); i < n; i++) {
        }
    } else if (level >= 2 && r < 37) {
        struct timespec ts = { 0, (long)trnd(200) * 1000L };
        nanosleep(&ts, NULL);
    }
}

static int
hook(int point, uint8_t *p, size_t n)
{
    atomic_fetch_add_explicit(&H.calls, 1, memory_order_relaxed);
    switch (point) {
    case HSCOPE__HOOK_WAKE: {
        unsigned d = atomic_load(&H.drop);
        if (d && trnd(d) == 0) {
            atomic_fetch_add(&H.drops, 1);
            return 1;
        }
        return 0;
    }
    case HSCOPE__HOOK_TIMEOUT:
        atomic_fetch_add(&H.timeouts, 1);
        return 0;
    case HSCOPE__HOOK_POISON:
        if (atomic_load(&H.poison)) {
            garbage(p, n);
            atomic_fetch_add_explicit(&H.poisoned, 1, memory_order_relaxed);
        }
        return 0;
    default: {
        int level = atomic_load(&H.perturb);
        if (level)
            perturb(level);
        return 0;
    }
    }
}

/* ------------------------------------------------------------------ */
/* inputs                                                             */
/* ------------------------------------------------------------------ */

/* One dump line of exactly n bytes plus its newline; n >= 15.  Long
 * enough, an object record (a string padded by its value); shorter, a
 * free-slot record padded with blanks before its '}'. */
static void
line_of(text *t, uint64_t addr, size_t n)
{
    char head[160];
    int h = snprintf(head, sizeof(head),
                     "{\"address\":\"0x%llx\", \"type\":\"STRING\", \"class\":\"0x%x\", "
                     "\"file\":\"f%u.rb\", \"line\":%u, \"value\":\"",
                     (unsigned long long)addr, 0x100 + 8 * rnd(4), rnd(3), rnd(40));
    if (n >= (size_t)h + 2) {
        put(t, head, (size_t)h);
        for (size_t i = (size_t)h; i + 2 < n; i++)
            put(t, "v", 1);
        put(t, "\"}\n", 3);
        return;
    }
    assert_true(n >= 15);
    put(t, "{\"type\":\"NONE\"", 14);
    for (size_t i = 14; i + 1 < n; i++)
        put(t, " ", 1);
    put(t, "}\n", 2);
}

static void
puts_(text *t, const char *s)
{
    put(t, s, strlen(s));
}

/* Whole lines of exactly `k` bytes in all: records while there is room,
 * then one of the rest; under 16 bytes, a blank line (skipped, or the
 * strict error). */
static void
prefix_of(text *t, uint64_t *addr, size_t k)
{
    while (k >= 16 + 90) {
        size_t n = 60 + rnd(30);
        line_of(t, (*addr)++ * 40, n);
        k -= n + 1;
    }
    if (k >= 16) {
        line_of(t, (*addr)++ * 40, k - 1);
    } else if (k > 0) {
        for (size_t i = 1; i < k; i++)
            put(t, " ", 1);
        put(t, "\n", 1);
    }
}

enum { END_NEWLINE, END_NONE, END_IN_LONG, END_CUT, END__COUNT };

/* Records, a line of `len1` bytes starting at byte `at`, records, a line
 * of `len2` bytes, records, and then the ending. */
static void
make_input(text *t, size_t at, size_t len1, size_t len2, int ending)
{
    uint64_t addr = 0x1000;
    prefix_of(t, &addr, at);
    assert_int_equal(t->len, at);
    line_of(t, addr++ * 40, len1);
    for (int i = 0, n = (int)rnd(6); i < n; i++)
        line_of(t, addr++ * 40, 40 + rnd(90));
    line_of(t, addr++ * 40, len2);
    for (int i = 0, n = (int)rnd(6); i < n; i++)
        line_of(t, addr++ * 40, 40 + rnd(90));
    puts_(t, "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x9c40\"]}\n");
    switch (ending) {
    case END_NONE: /* the last line has no newline */
        line_of(t, addr * 40, 70);
        t->len--;
        break;
    case END_IN_LONG: /* the input ends inside a long line */
        line_of(t, addr * 40, len1 + len2);
        t->len -= 1 + rnd((uint32_t)len1);
        break;
    case END_CUT: /* the input ends inside a record */
        puts_(t, "{\"address\":\"0x77\", \"type\":\"STR");
        break;
    default:
        break;
    }
}

/* As the fuzz_parse input that once hung: records, and five lines over the
 * limit L among them, one of 20,678 bytes. */
static void
make_five_long(text *t, uint64_t L)
{
    uint64_t addr = 0x1000;
    for (int j = 0; j < 5; j++) {
        for (int i = 0, n = 3 + (int)rnd(30); i < n; i++)
            line_of(t, addr++ * 40, 40 + rnd((uint32_t)L - 40));
        line_of(t, addr++ * 40, j == 2 ? 20678 : L + rnd((uint32_t)(3 * L)));
    }
    for (int i = 0, n = (int)rnd(10); i < n; i++)
        line_of(t, addr++ * 40, 40 + rnd((uint32_t)L - 40));
}

/* ------------------------------------------------------------------ */
/* one load                                                           */
/* ------------------------------------------------------------------ */

enum { SRC_MEMORY, SRC_FILE, SRC_PIPE, SRC__COUNT };
static const char *const src_name[] = { "memory", "file", "pipe" };

typedef struct input {
    const uint8_t *data, *gz;
    size_t len, gzlen;
    char path[4096], gzpath[4096]; /* the same bytes in files */
} input;

typedef struct cfg {
    unsigned threads;  /* 0: hscope__parse_stream (the reference) */
    int strict, src, gzip;
    uint64_t max_line, block;
    uint64_t progress_bytes;
    long cancel_at;        /* > 0: the progress callback cancels at this call */
    long cancel_after_us;  /* > 0: another thread cancels after this long */
    int must_cancel;       /* the callback cancels before the end: check it did */
} cfg;

typedef struct result {
    hscope_status st;
    hscope_error err;
    text out;
    long progress_calls;
} result;

typedef struct progress_state {
    long calls, cancel_at;
    atomic_int flag;
} progress_state;

static int32_t
on_progress(void *ud, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    progress_state *p = ud;
    p->calls++;
    return (p->cancel_at && p->calls >= p->cancel_at) || atomic_load(&p->flag);
}

typedef struct canceller {
    progress_state *p;
    long after_us;
} canceller;

static void *
cancel_later(void *arg)
{
    canceller *c = arg;
    struct timespec ts = { c->after_us / 1000000, (c->after_us % 1000000) * 1000L };
    nanosleep(&ts, NULL);
    atomic_store(&c->p->flag, 1);
    return NULL;
}

typedef struct writer {
    int fd;
    const uint8_t *p;
    size_t len;
    uint64_t seed;
} writer;

/* Feed a pipe in pieces of random size, yielding now and then. */
static void *
write_pipe(void *arg)
{
    writer *w = arg;
    size_t done = 0;
    while (done < w->len) {
        size_t n = 1 + (size_t)(splitmix(&w->seed) % 700);
        if (n > w->len - done)
            n = w->len - done;
        ssize_t k = write(w->fd, w->p + done, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* EPIPE: the load stopped reading (error, cancel) */
        done += (size_t)k;
        if (splitmix(&w->seed) % 4 == 0)
            sched_yield();
    }
    close(w->fd);
    return NULL;
}

static void
describe_cfg(char *buf, size_t n, const cfg *c)
{
    snprintf(buf, n, "%u threads, %s, %s%s, max_line %llu, block %llu, cancel at %ld / after %ld us",
             c->threads, c->strict ? "strict" : "lenient", c->gzip ? "gzip " : "",
             src_name[c->src], (unsigned long long)c->max_line, (unsigned long long)c->block,
             c->cancel_at, c->cancel_after_us);
}

static void
load(result *R, const input *in, const cfg *c)
{
    memset(R, 0, sizeof(*R));
    hscope_error_init(&R->err);
    char what[256];
    describe_cfg(what, sizeof(what), c);
    hscope__mem mem;
    hscope__mem_init(&mem, NULL, 0);
    hscope__builder b;
    assert_int_equal(hscope__builder_init(&b, &mem, 1, 0, &R->err), HSCOPE_OK);
    progress_state ps;
    memset(&ps, 0, sizeof(ps));
    ps.cancel_at = c->cancel_at;
    atomic_init(&ps.flag, 0);
    hscope__parse_opts o;
    memset(&o, 0, sizeof(o));
    o.strict = c->strict;
    o.max_line = c->max_line;
    o.block_bytes = c->block;
    o.progress_bytes = c->progress_bytes;
    if (c->cancel_at || c->cancel_after_us) {
        o.progress = on_progress;
        o.progress_ud = &ps;
    }
    const uint8_t *bytes = c->gzip ? in->gz : in->data;
    size_t nbytes = c->gzip ? in->gzlen : in->len;
    hscope__reader r;
    int fd = -1;
    pthread_t wt, ct;
    writer w;
    int writing = 0, cancelling = 0;
    if (c->src == SRC_MEMORY) {
        assert_int_equal(hscope__reader_open_memory(&r, &mem, bytes, nbytes, 0, &R->err),
                         HSCOPE_OK);
    } else if (c->src == SRC_FILE) {
        fd = open(c->gzip ? in->gzpath : in->path, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(hscope__reader_open_fd(&r, &mem, fd, 0, &R->err), HSCOPE_OK);
    } else {
        int pfd[2];
        assert_int_equal(pipe(pfd), 0);
        fd = pfd[0];
        w.fd = pfd[1];
        w.p = bytes;
        w.len = nbytes;
        w.seed = splitmix(&main_rng);
        assert_int_equal(pthread_create(&wt, NULL, write_pipe, &w), 0);
        writing = 1;
        assert_int_equal(hscope__reader_open_fd(&r, &mem, fd, 0, &R->err), HSCOPE_OK);
    }
    canceller cc = { &ps, c->cancel_after_us };
    if (c->cancel_after_us) {
        assert_int_equal(pthread_create(&ct, NULL, cancel_later, &cc), 0);
        cancelling = 1;
    }
    wd_arm(LOAD_SECONDS, "a load: %s", what);
    if (c->threads == 0)
        R->st = hscope__parse_stream(&r, &b, &o, &R->err);
    else
        R->st = hscope__parse_parallel(&r, &b, &o, c->threads, &R->err);
    wd_disarm();
    R->progress_calls = ps.calls;
    if (R->st == HSCOPE_OK)
        describe(&R->out, &b);
    hscope__reader_close(&r);
    if (fd >= 0)
        close(fd); /* a writer still writing now gets EPIPE */
    if (writing)
        pthread_join(wt, NULL);
    if (cancelling)
        pthread_join(ct, NULL);
    hscope__builder_free(&b);
    if (mem.used != 0)
        fail_msg("%s: %llu bytes left allocated", what, (unsigned long long)mem.used);
}

static unsigned long loads_done, loads_cancelled;

/* Load with c and check against the reference. */
static void
check(const input *in, const result *ref, const cfg *c)
{
    result R;
    load(&R, in, c);
    loads_done++;
    char what[256];
    describe_cfg(what, sizeof(what), c);
    if (c->must_cancel && R.st != HSCOPE_ERR_CANCELLED)
        fail_msg("%s: not cancelled (status %d, %ld progress calls)", what, R.st,
                 R.progress_calls);
    if ((c->cancel_at || c->cancel_after_us) && R.st == HSCOPE_ERR_CANCELLED) {
        assert_string_equal(R.err.message, "load cancelled");
        loads_cancelled++;
        free(R.out.p);
        return;
    }
    if (R.st != ref->st || R.err.status != ref->err.status || R.err.line != ref->err.line ||
        R.err.offset != ref->err.offset || strcmp(R.err.message, ref->err.message) != 0)
        fail_msg("%s: status %d line %llu byte %llu '%s'; one thread: %d line %llu byte %llu "
                 "'%s'",
                 what, R.st, (unsigned long long)R.err.line, (unsigned long long)R.err.offset,
                 R.err.message, ref->st, (unsigned long long)ref->err.line,
                 (unsigned long long)ref->err.offset, ref->err.message);
    if (R.st == HSCOPE_OK &&
        (R.out.len != ref->out.len || memcmp(R.out.p, ref->out.p, R.out.len) != 0)) {
        size_t i = 0;
        while (i < R.out.len && i < ref->out.len && R.out.p[i] == ref->out.p[i])
            i++;
        size_t from = i > 80 ? i - 80 : 0;
        fail_msg("%s: the result differs at %zu:\nparallel:   ...%.200s\none thread: ...%.200s",
                 what, i, R.out.p + from, ref->out.p + from);
    }
    free(R.out.p);
}

static const char *
tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

static void
write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void
input_init(input *in, const text *t)
{
    memset(in, 0, sizeof(*in));
    in->data = (const uint8_t *)(t->p ? t->p : "");
    in->len = t->len;
    in->gz = gzip_bytes(in->data, in->len, &in->gzlen);
    snprintf(in->path, sizeof(in->path), "%s/hscope_handoff_%ld.json", tmpdir(), (long)getpid());
    snprintf(in->gzpath, sizeof(in->gzpath), "%s/hscope_handoff_%ld.json.gz", tmpdir(),
             (long)getpid());
    write_file(in->path, in->data, in->len);
    write_file(in->gzpath, in->gz, in->gzlen);
}

static void
input_free(input *in)
{
    unlink(in->path);
    unlink(in->gzpath);
    free((void *)in->gz);
}

/* The i-th configuration of a cycle through threads 1-8, lenient and
 * strict, and the sources: memory, file and pipe, plain and gzip, plain
 * ones also in blocks (block mode needs blocks of at most max_line / 2). */
static void
cfg_of(cfg *c, unsigned long i, uint64_t max_line)
{
    memset(c, 0, sizeof(*c));
    c->threads = 1 + (unsigned)(i % 8);
    c->strict = (int)((i / 8) % 2);
    c->max_line = max_line;
    unsigned k = (unsigned)((i / 16) % 8);
    static const int srcs[8][3] = {
        /* source, gzip, blocks */
        { SRC_MEMORY, 0, 0 }, { SRC_MEMORY, 0, 1 }, { SRC_FILE, 0, 0 }, { SRC_FILE, 0, 1 },
        { SRC_PIPE, 0, 0 },   { SRC_MEMORY, 1, 0 }, { SRC_FILE, 1, 0 },  { SRC_PIPE, 1, 0 },
    };
    c->src = srcs[k][0];
    c->gzip = srcs[k][1];
    if (srcs[k][2]) {
        static const uint64_t div[] = { 2, 3, 8 };
        c->block = max_line / div[rnd(3)];
        if (c->block == 0)
            c->block = 1;
    }
}

static void
reference(result *ref, const input *in, int strict, uint64_t max_line)
{
    cfg c;
    memset(&c, 0, sizeof(c));
    c.strict = strict;
    c.max_line = max_line;
    load(ref, in, &c);
}

static unsigned default_wait_ms; /* the parser's bound of its waits */

/* The hook for the next loads: schedule perturbed at `perturb_level`,
 * buffers poisoned or not, and one wakeup in `drop` lost (0: none); with
 * lost wakeups every wait is bounded at 2 ms, so that each costs little. */
static void
set_hooks(int perturb_level, int poison, unsigned drop)
{
    if (!default_wait_ms)
        default_wait_ms = hscope__parallel_wait_ms;
    atomic_store(&H.perturb, perturb_level);
    atomic_store(&H.poison, poison);
    atomic_store(&H.drop, drop);
    hscope__parallel_wait_ms = drop ? 2 : default_wait_ms;
    hscope__parallel_hook = hook;
}

static void
hooks_off(void)
{
    hscope__parallel_hook = NULL;
    if (default_wait_ms)
        hscope__parallel_wait_ms = default_wait_ms;
}

static void
report(const char *test, double t0)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - t0;
    printf("%s: %lu loads (%lu cancelled) in %.1f s; hook calls %lu, wakeups dropped %lu, "
           "bounded waits that ran out %lu, buffers poisoned %lu\n",
           test, loads_done, loads_cancelled, t, atomic_load(&H.calls), atomic_load(&H.drops),
           atomic_load(&H.timeouts), atomic_load(&H.poisoned));
    fflush(stdout);
}

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
reset_counts(void)
{
    loads_done = loads_cancelled = 0;
    atomic_store(&H.calls, 0);
    atomic_store(&H.drops, 0);
    atomic_store(&H.timeouts, 0);
    atomic_store(&H.poisoned, 0);
}

/* Counters to zero; the time now. */
static double
begin(void)
{
    reset_counts();
    return now();
}

/* ------------------------------------------------------------------ */
/* tests                                                              */
/* ------------------------------------------------------------------ */

/*
 * Over-long lines of every length around the chunk size (the line limit
 * L: reading in order, a slot holds L bytes) at every position of the
 * first chunk; a second one of another length later; every ending.  One
 * load per (length, position), the configuration cycling through the
 * threads, modes and sources, with the schedule perturbed and the
 * buffers poisoned.
 */
static void
test_long_lines_everywhere(void **state)
{
    (void)state;
    double t0 = begin();
    unsigned long i = 0;
    static const uint64_t limits[] = { 64, 100, 256 };
    for (int round = 0; round < rounds(); round++) {
        for (size_t li = 0; li < sizeof(limits) / sizeof(limits[0]); li++) {
            uint64_t L = limits[li];
            size_t lens[] = { L - 1, L, L + 1, 2 * L - 1, 2 * L, 2 * L + 1, 3 * L + 7, 20678 };
            for (size_t at = (size_t)round % stride(); at < L; at += stride()) {
                for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
                    text t = { 0 };
                    make_input(&t, at, lens[k], lens[rnd(8)], (int)((at + k) % END__COUNT));
                    input in;
                    input_init(&in, &t);
                    cfg c;
                    cfg_of(&c, i, L);
                    set_hooks(1 + (int)(i % 2), i % 4 != 3, 0);
                    result ref;
                    reference(&ref, &in, c.strict, L);
                    check(&in, &ref, &c);
                    free(ref.out.p);
                    input_free(&in);
                    free(t.p);
                    i++;
                }
            }
        }
    }
    report("long lines everywhere", t0);
    hooks_off();
}

/*
 * Wakeups lost at random (one in three): the loads still finish, through
 * the bounded waits, with the same results.  Before the fix (signal, and
 * waits without a bound) the first lost wakeup of an idle worker hung the
 * load with the merger in pthread_cond_wait: the watchdog then shows it.
 */
static void
test_lost_wakeups(void **state)
{
    (void)state;
    double t0 = begin();
    unsigned long n = (unsigned long)(640 * stress());
    for (unsigned long i = 0; i < n; i++) {
        uint64_t L = 64 + rnd(200);
        text t = { 0 };
        make_input(&t, rnd((uint32_t)L), L - 1 + rnd(3), 2 * L + rnd(300), (int)rnd(END__COUNT));
        input in;
        input_init(&in, &t);
        cfg c;
        cfg_of(&c, i, L);
        set_hooks((int)(i % 3), 1, 3);
        result ref;
        reference(&ref, &in, c.strict, L);
        check(&in, &ref, &c);
        free(ref.out.p);
        input_free(&in);
        free(t.p);
    }
    report("lost wakeups", t0);
    assert_true(atomic_load(&H.drops) > n); /* it did lose wakeups */
    hooks_off();
}

/*
 * Cancellation.  A progress callback called after every read (or block)
 * cancels at its Nth call, for N from 1 to the number of calls a whole
 * load makes, with 1-8 threads and every source; and a flag set from
 * another thread at a random moment, polled by the callback, as Ruby's
 * unblock function does on Ctrl-C.  The load must return (the watchdog
 * sees to that), with HSCOPE_ERR_CANCELLED whenever the callback said so
 * before the end (or, for a flag set too late, the full result), and
 * leave nothing allocated; lost wakeups now and then on top.
 */
static void
test_cancel_always_returns(void **state)
{
    (void)state;
    double t0 = begin();
    const uint64_t L = 64 << 10; /* so a memory input is read in many chunks */
    text t = { 0 };
    uint64_t addr = 0x1000;
    while (t.len < ((size_t)3 << 19)) {
        line_of(&t, addr++ * 40, 40 + rnd(400));
        if (rnd(4000) == 0)
            line_of(&t, addr++ * 40, L + rnd(10000)); /* over the limit */
    }
    input in;
    input_init(&in, &t);
    result ref[2];
    reference(&ref[0], &in, 0, L);
    reference(&ref[1], &in, 1, L);
    unsigned long i = 0;
    for (unsigned k = 0; k < 8; k++) {
        for (int strict = 0; strict < 2; strict++) {
            cfg c;
            cfg_of(&c, 16 * k + 8 * (unsigned long)strict, L);
            c.progress_bytes = 1;
            c.cancel_at = LONG_MAX; /* count the calls of a whole load */
            set_hooks(0, 0, 0);
            result R;
            double l0 = now();
            load(&R, &in, &c);
            double took = now() - l0;
            long calls = R.progress_calls;
            assert_true(calls >= 1);
            free(R.out.p);
            /* the same count every time, except from a pipe (read in
             * pieces of any size) or when a strict error stops the load
             * (after as many reads as the threads got ahead) */
            int exact = c.src != SRC_PIPE && !strict;
            long step = calls / 12 + 1;
            for (long at = 1; at <= calls + 1; at += step * (long)stride(), i++) {
                c.threads = 1 + (unsigned)(i % 8);
                c.cancel_at = at <= calls ? at : calls;
                c.cancel_after_us = 0;
                c.must_cancel = exact;
                set_hooks(1 + (int)(i % 2), 1, i % 5 == 0 ? 4 : 0);
                check(&in, &ref[strict], &c);
                /* and from another thread, at any moment of the load */
                c.cancel_at = 0;
                c.must_cancel = 0;
                c.cancel_after_us = 1 + (long)rnd((uint32_t)(took * 1e6) + 1);
                check(&in, &ref[strict], &c);
            }
        }
    }
    free(ref[0].out.p);
    free(ref[1].out.p);
    input_free(&in);
    free(t.p);
    report("cancel", t0);
    assert_true(loads_cancelled > loads_done / 3);
    hooks_off();
}

/*
 * The streaming fold (hscope_tally_file: the slots fold on the workers),
 * the path that hung in fuzz_parse step G: 1-8 threads must give one
 * thread's rows, or fail the same way, with the schedule perturbed.
 */
static void
test_streaming_fold(void **state)
{
    (void)state;
    double t0 = begin();
    unsigned long n = (unsigned long)(160 * stress());
    for (unsigned long i = 0; i < n; i++) {
        uint64_t L = 128 + rnd(200);
        text t = { 0 };
        make_five_long(&t, L);
        input in;
        input_init(&in, &t);
        hscope_load_options lo;
        hscope_load_options_init(&lo);
        lo.max_line_bytes = L;
        if (i % 2)
            lo.flags |= HSCOPE_LOAD_STRICT;
        hscope_tally_t *tt[2] = { NULL, NULL };
        hscope_error e[2];
        hscope_status st[2];
        set_hooks(1 + (int)(i % 2), 1, i % 4 == 0 ? 3 : 0);
        for (int k = 0; k < 2; k++) {
            lo.threads = k ? 2 + (unsigned)(i % 7) : 1;
            hscope_error_init(&e[k]);
            wd_arm(LOAD_SECONDS, "hscope_tally_file, %u threads, %s, max_line %llu",
                   lo.threads, i % 2 ? "strict" : "lenient", (unsigned long long)L);
            st[k] = hscope_tally_file(&tt[k], i % 3 == 2 ? in.gzpath : in.path,
                                      "file:line:class", &lo, NULL, &e[k]);
            wd_disarm();
            loads_done++;
        }
        assert_int_equal(st[0], st[1]);
        if (st[0] != HSCOPE_OK) {
            assert_int_equal(e[0].line, e[1].line);
            assert_int_equal(e[0].offset, e[1].offset);
        } else {
            uint64_t nr = hscope_tally_row_count(tt[0]);
            assert_int_equal(hscope_tally_row_count(tt[1]), nr);
            for (uint64_t r = 0; r < nr; r++) {
                assert_string_equal(hscope_tally_row_key(tt[0], r), hscope_tally_row_key(tt[1], r));
                assert_int_equal(hscope_tally_row_count_of(tt[0], r),
                                 hscope_tally_row_count_of(tt[1], r));
                assert_int_equal(hscope_tally_row_memsize(tt[0], r),
                                 hscope_tally_row_memsize(tt[1], r));
            }
        }
        hscope_tally_free(tt[0]);
        hscope_tally_free(tt[1]);
        input_free(&in);
        free(t.p);
    }
    report("streaming fold", t0);
    hooks_off();
}

/* The watchdog itself: a step that does not finish prints the stacks and
 * aborts (checked in a child process). */
static void
test_watchdog_fires(void **state)
{
    (void)state;
    fflush(stdout);
    fflush(stderr);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        /* only this thread was copied: start the watchdog afresh */
        pthread_mutex_init(&wd_.mu, NULL);
        pthread_cond_init(&wd_.cv, NULL);
        wd_.started = wd_.armed = 0;
        setenv("HEAPSCOPE_WATCHDOG_SCALE", "1", 1);
        wd_arm(0.3, "a step that never ends");
        for (;;)
            pause();
    }
    close(pfd[1]);
    text out = { 0 };
    char buf[4096];
    ssize_t k;
    while ((k = read(pfd[0], buf, sizeof(buf))) > 0)
        put(&out, buf, (size_t)k);
    close(pfd[0]);
    int status;
    assert_int_equal(waitpid(c, &status, 0), c);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    assert_non_null(out.p);
    assert_non_null(strstr(out.p, "still running after 0 s: a step that never ends"));
    /* gdb's backtrace shows the main thread in pause(), or /proc lists it */
    assert_true(strstr(out.p, "pause") != NULL || strstr(out.p, "thread ") != NULL);
    free(out.p);
}

int
main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watchdog_fires),
        cmocka_unit_test(test_long_lines_everywhere),
        cmocka_unit_test(test_lost_wakeups),
        cmocka_unit_test(test_cancel_always_returns),
        cmocka_unit_test(test_streaming_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
