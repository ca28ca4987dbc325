/*
 * test_alloc.c - custom allocator hooks and failure injection, through the
 * public API only.
 *
 * The allocator below counts live blocks and bytes and can fail the k-th
 * allocation call (malloc or realloc).  A full run (load + two tallies +
 * referrers + a value lookup) is measured first; then every k from 1 to
 * the number of calls of that run is failed in turn.  Each run must either
 * succeed with the same answers or fail with HSCOPE_ERR_NOMEM, leave *out
 * NULL, and leak nothing: the live count is back to zero after freeing.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

/* ------------------------------------------------------------------ */
/* The chaos allocator                                                  */
/* ------------------------------------------------------------------ */

typedef struct chaos {
    long live;        /* blocks allocated and not freed */
    long calls;       /* malloc/realloc calls so far */
    long fail_at;     /* fail this call (1-based); 0: never */
    long failed;      /* calls that were failed */
    size_t bytes, peak;
} chaos;

#define HDR 16

/* The parallel parser allocates from several threads: the hooks take a
 * lock (cheap enough for these small inputs). */
static pthread_mutex_t ch_lock = PTHREAD_MUTEX_INITIALIZER;

static void *ch_malloc_locked(void *ud, size_t n);

static void *
ch_malloc(void *ud, size_t n)
{
    pthread_mutex_lock(&ch_lock);
    void *p = ch_malloc_locked(ud, n);
    pthread_mutex_unlock(&ch_lock);
    return p;
}

static void *
ch_malloc_locked(void *ud, size_t n)
{
    chaos *c = ud;
    c->calls++;
    if (c->fail_at && c->calls == c->fail_at) {
        c->failed++;
        return NULL;
    }
    unsigned char *p = malloc(n + HDR);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof(n));
    c->live++;
    c->bytes += n;
    if (c->bytes > c->peak)
        c->peak = c->bytes;
    return p + HDR;
}

static void *ch_realloc_locked(void *ud, void *q, size_t n);

static void *
ch_realloc(void *ud, void *q, size_t n)
{
    pthread_mutex_lock(&ch_lock);
    void *p = ch_realloc_locked(ud, q, n);
    pthread_mutex_unlock(&ch_lock);
    return p;
}

static void *
ch_realloc_locked(void *ud, void *q, size_t n)
{
    chaos *c = ud;
    if (!q)
        return ch_malloc_locked(ud, n);
    c->calls++;
    if (c->fail_at && c->calls == c->fail_at) {
        c->failed++;
        return NULL;
    }
    size_t old;
    memcpy(&old, (unsigned char *)q - HDR, sizeof(old));
    unsigned char *p = realloc((unsigned char *)q - HDR, n + HDR);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof(n));
    c->bytes = c->bytes - old + n;
    if (c->bytes > c->peak)
        c->peak = c->bytes;
    return p + HDR;
}

static void
ch_free(void *ud, void *q)
{
    chaos *c = ud;
    if (!q)
        return;
    pthread_mutex_lock(&ch_lock);
    size_t old;
    memcpy(&old, (unsigned char *)q - HDR, sizeof(old));
    c->live--;
    c->bytes -= old;
    free((unsigned char *)q - HDR);
    pthread_mutex_unlock(&ch_lock);
}

static void
chaos_reset(chaos *c, long fail_at)
{
    memset(c, 0, sizeof(*c));
    c->fail_at = fail_at;
}

/* ------------------------------------------------------------------ */
/* Inputs                                                               */
/* ------------------------------------------------------------------ */

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void
printf_(text *t, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof(line));
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = t->cap ? t->cap * 2 : 65536;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    memcpy(t->p + t->len, line, (size_t)n + 1);
    t->len += (size_t)n;
}

/*
 * A dump with every kind of record and `n` extra objects spread over
 * `files` files (so that strings, sites, object columns and edges all
 * have to grow when n is large).  Object 0x1000+16i references the next
 * one and one address that is not in the dump.
 */
static text
make_dump(int n, int files)
{
    text t = { 0 };
    printf_(&t, "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x100\", \"0x1000\", \"0xdead0\"]}\n");
    printf_(&t, "{\"type\":\"ROOT\", \"root\":\"machine_context\", \"references\":[\"0x108\"]}\n");
    printf_(&t, "{\"address\":\"0x7f00\", \"type\":\"SHAPE\", \"id\":0, \"memsize\":184}\n");
    printf_(&t, "{\"address\":\"0x100\", \"type\":\"CLASS\", \"class\":\"0x108\", \"name\":\"Foo\", \"memsize\":500}\n");
    printf_(&t, "{\"address\":\"0x108\", \"type\":\"CLASS\", \"real_class_name\":\"Class\", \"memsize\":300}\n");
    printf_(&t, "{\"address\":\"0x110\", \"type\":\"IMEMO\", \"imemo_type\":\"ment\", \"references\":[\"0x100\"], \"memsize\":40}\n");
    printf_(&t, "{\"address\":\"0x118\", \"type\":\"IMEMO\", \"imemo_type\":\"env\", \"memsize\":40}\n");
    printf_(&t, "{\"address\":\"0x120\", \"type\":\"STRING\", \"bytesize\":5, \"value\":\"a\\\"b\\\\c\", \"memsize\":40}\n");
    printf_(&t, "{\"address\":\"0x128\", \"type\":\"WIDGET\", \"class\":\"0xfeed0\", \"memsize\":8}\n");
    printf_(&t, "not a record\n");
    printf_(&t, "{\"address\":\"0x130\", \"type\":\"NONE\"}\n");
    for (int i = 0; i < n; i++) {
        int f = i % files;
        printf_(&t,
                "{\"address\":\"0x%x\", \"type\":\"STRING\", \"class\":\"0x%s\", "
                "\"bytesize\":3, \"value\":\"v%d\", \"references\":[\"0x%x\", \"0xbad%x\"], "
                "\"file\":\"/srv/gems/gem%d-1.0/lib/f%d.rb\", \"line\":%d, \"method\":\"m%d\", "
                "\"generation\":%d, \"memsize\":%d}\n",
                0x1000 + 16 * i, i % 3 ? "100" : "108", i % 100,
                0x1000 + 16 * (i + 1), i, f % 7, f, i % 13, i % 5, i % 4, 40 + i % 3);
    }
    return t;
}

/* ------------------------------------------------------------------ */
/* One full run                                                         */
/* ------------------------------------------------------------------ */

typedef struct answers {
    uint64_t objects, references, groups1, groups2, count0;
    char key0[128], gem0[64];
    uint64_t nrev;
    uint64_t diff, reachable, holders, path; /* + 1; 0: not computed */
} answers;

/*
 * Load + tally "file:line:class" + tally "gem" + referrers + diff +
 * dominator tree + holders + children + paths + value, with the chaos
 * allocator.  Returns 1 if everything succeeded (answers
 * filled), 0 if some step failed with NOMEM (which it checks).  The heap
 * is freed before the tallies, so the reference counting is exercised on
 * every failure path too.
 */
static int
full_run(const text *d, chaos *c, answers *a)
{
    hscope_allocator al = { sizeof(al), 0, ch_malloc, ch_realloc, ch_free, c };
    hscope_load_options o = HSCOPE_LOAD_OPTIONS_INIT;
    o.allocator = &al;
    o.flags = HSCOPE_LOAD_VALUES;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *h = (hscope_heap_t *)(uintptr_t)1;
    hscope_status st = hscope_heap_open_memory(&h, d->p, d->len, &o, &err);
    if (st != HSCOPE_OK) {
        if (st != HSCOPE_ERR_NOMEM)
            fail_msg("load failed with %s (%s), not NOMEM (fail_at %ld)",
                     hscope_status_name(st), err.message, c->fail_at);
        assert_null(h);
        assert_int_equal(err.status, HSCOPE_ERR_NOMEM);
        assert_true(strlen(err.message) > 0);
        return 0;
    }
    assert_non_null(h);
    int ok = 1;
    memset(a, 0, sizeof(*a));
    a->objects = hscope_heap_object_count(h);
    a->references = hscope_heap_reference_count(h);

    hscope_tally_t *t1 = (hscope_tally_t *)(uintptr_t)1, *t2 = (hscope_tally_t *)(uintptr_t)1;
    hscope_error_init(&err);
    st = hscope_tally_compute(&t1, h, "file:line:class", NULL, &err);
    if (st != HSCOPE_OK) {
        if (st != HSCOPE_ERR_NOMEM)
            fail_msg("tally failed with %s, not NOMEM (fail_at %ld)", hscope_status_name(st),
                     c->fail_at);
        assert_null(t1);
        assert_int_equal(err.status, HSCOPE_ERR_NOMEM);
        ok = 0;
    }
    hscope_error_init(&err);
    st = hscope_tally_compute(&t2, h, "gem", NULL, &err);
    if (st != HSCOPE_OK) {
        if (st != HSCOPE_ERR_NOMEM)
            fail_msg("gem tally failed with %s, not NOMEM (fail_at %ld)",
                     hscope_status_name(st), c->fail_at);
        assert_null(t2);
        ok = 0;
    }
    /* referrers of the class Foo (0x100): built lazily, may fail once;
     * a retry after a failure must work */
    hscope_id foo;
    assert_int_equal(hscope_heap_find(h, 0x100, &foo), HSCOPE_OK);
    const hscope_id *src;
    uint64_t n = 0;
    hscope_error_init(&err);
    st = hscope_heap_object_referrers(h, foo, &src, &n, &err);
    if (st != HSCOPE_OK) {
        if (st != HSCOPE_ERR_NOMEM)
            fail_msg("referrers failed with %s, not NOMEM (fail_at %ld)",
                     hscope_status_name(st), c->fail_at);
        assert_int_equal(err.status, HSCOPE_ERR_NOMEM);
        ok = 0;
        st = hscope_heap_object_referrers(h, foo, &src, &n, NULL);
        assert_int_equal(st, HSCOPE_OK);
    }
    a->nrev = n;

    /* diff (the heap against itself: nothing is new), dominator tree,
     * holders and paths, each under the same failing allocator */
    hscope_diff_t *df = (hscope_diff_t *)(uintptr_t)1;
    hscope_error_init(&err);
    st = hscope_diff_compute(&df, h, h, h, NULL, &err);
    if (st != HSCOPE_OK) {
        if (st != HSCOPE_ERR_NOMEM)
            fail_msg("diff failed with %s, not NOMEM (fail_at %ld)", hscope_status_name(st),
                     c->fail_at);
        assert_null(df);
        ok = 0;
    } else {
        a->diff = hscope_diff_count(df) + 1;
        hscope_diff_free(df);
    }
    hscope_domtree_t *dt = (hscope_domtree_t *)(uintptr_t)1;
    hscope_error_init(&err);
    st = hscope_domtree_compute(&dt, h, NULL, &err);
    if (st != HSCOPE_OK) {
        if (st != HSCOPE_ERR_NOMEM)
            fail_msg("dominators failed with %s, not NOMEM (fail_at %ld)",
                     hscope_status_name(st), c->fail_at);
        assert_null(dt);
        ok = 0;
    } else {
        uint64_t reach = 0;
        hscope_domtree_totals(dt, &reach, NULL, NULL, NULL);
        a->reachable = reach + 1;
        hscope_id all[64];
        uint64_t na = a->objects < 64 ? a->objects : 64;
        for (uint64_t i = 0; i < na; i++)
            all[i] = (hscope_id)i;
        hscope_holders_t *hs = (hscope_holders_t *)(uintptr_t)1;
        st = hscope_holders_compute(&hs, dt, all, na, NULL);
        if (st != HSCOPE_OK) {
            assert_int_equal(st, HSCOPE_ERR_NOMEM);
            assert_null(hs);
            ok = 0;
        } else {
            a->holders = hscope_holders_count(hs) + 1;
            hscope_holders_free(hs);
        }
        const hscope_id *kids;
        uint64_t nk;
        st = hscope_domtree_children(dt, HSCOPE_ID_NONE, -1, &kids, &nk, NULL);
        if (st != HSCOPE_OK) {
            assert_int_equal(st, HSCOPE_ERR_NOMEM);
            ok = 0;
        }
        hscope_domtree_free(dt);
    }
    hscope_paths_t *ps = (hscope_paths_t *)(uintptr_t)1;
    st = hscope_paths_compute(&ps, h, NULL, NULL);
    if (st != HSCOPE_OK) {
        assert_int_equal(st, HSCOPE_ERR_NOMEM);
        assert_null(ps);
        ok = 0;
    } else {
        a->path = hscope_paths_get(ps, foo, NULL, 0, NULL) + 1;
        hscope_paths_free(ps);
    }
    const char *v;
    uint64_t vl;
    hscope_id sid;
    assert_int_equal(hscope_heap_find(h, 0x120, &sid), HSCOPE_OK);
    assert_int_equal(hscope_heap_object_value(h, sid, &v, &vl), HSCOPE_OK);
    assert_int_equal(vl, 5);
    assert_memory_equal(v, "a\"b\\c", 5);

    hscope_heap_free(h); /* before the tallies: they keep it alive */
    if (t1) {
        a->groups1 = hscope_tally_group_count(t1);
        a->count0 = hscope_tally_row_count_of(t1, 0);
        snprintf(a->key0, sizeof(a->key0), "%s", hscope_tally_row_key(t1, 0));
        hscope_tally_free(t1);
    }
    if (t2) {
        a->groups2 = hscope_tally_group_count(t2);
        snprintf(a->gem0, sizeof(a->gem0), "%s", hscope_tally_row_key(t2, 0));
        hscope_tally_free(t2);
    }
    return ok;
}

static void
inject_all(const text *d, const answers *want, long *calls_out)
{
    chaos c;
    answers a;
    chaos_reset(&c, 0);
    assert_int_equal(full_run(d, &c, &a), 1);
    assert_int_equal(c.live, 0);
    assert_int_equal(c.bytes, 0);
    long total = c.calls;
    assert_true(total > 10);
    if (want) {
        assert_int_equal(a.objects, want->objects);
        assert_int_equal(a.references, want->references);
        assert_int_equal(a.groups1, want->groups1);
        assert_int_equal(a.groups2, want->groups2);
        assert_int_equal(a.count0, want->count0);
        assert_string_equal(a.key0, want->key0);
        assert_string_equal(a.gem0, want->gem0);
        assert_int_equal(a.nrev, want->nrev);
    }
    int failures = 0, leaks = 0;
    for (long k = 1; k <= total; k++) {
        chaos_reset(&c, k);
        answers b;
        int ok = full_run(d, &c, &b);
        /* go on after a leak, so that one run lists every leaking path */
        if (c.live != 0) {
            print_error("failing allocation %ld of %ld leaked %ld blocks (%zu bytes)\n", k,
                        total, c.live, c.bytes);
            leaks++;
        }
        assert_int_equal(c.failed, 1);
        if (ok) {
            /* a tolerated failure (e.g. a shrink) must not change results */
            assert_int_equal(b.objects, a.objects);
            assert_int_equal(b.references, a.references);
            assert_int_equal(b.groups1, a.groups1);
            assert_int_equal(b.groups2, a.groups2);
            assert_string_equal(b.key0, a.key0);
            assert_string_equal(b.gem0, a.gem0);
            assert_int_equal(b.nrev, a.nrev);
            assert_int_equal(b.diff, a.diff);
            assert_int_equal(b.reachable, a.reachable);
            assert_int_equal(b.holders, a.holders);
            assert_int_equal(b.path, a.path);
        } else {
            failures++;
        }
    }
    if (leaks)
        fail_msg("%d of %ld failure paths leaked (see above)", leaks, total);
    /* most injected failures must be reported, not swallowed */
    assert_true(failures > total / 2);
    if (calls_out)
        *calls_out = total;
}

/* ------------------------------------------------------------------ */
/* Tests                                                                */
/* ------------------------------------------------------------------ */

/* Everything the library allocates goes through the hooks and is freed. */
static void
test_no_leak(void **state)
{
    (void)state;
    text d = make_dump(300, 20);
    chaos c;
    chaos_reset(&c, 0);
    answers a;
    assert_int_equal(full_run(&d, &c, &a), 1);
    assert_int_equal(c.live, 0);
    assert_int_equal(c.bytes, 0);
    assert_true(c.peak > 0);
    /* 6 fixed objects (2 CLASS, 2 IMEMO, STRING, WIDGET) + 300 */
    assert_int_equal(a.objects, 306);
    /* each generated object references the next (the last one's target
     * is absent), IMEMO ment references Foo: 299 + 1 */
    assert_int_equal(a.references, 300);
    /* referrers of Foo: the IMEMO only (class is not an edge) */
    assert_int_equal(a.nrev, 1);
    /* file:line:class: the 6 fixed objects have no file and give 5
     * groups ("(none):0:" + Class, <hidden> twice, <imemo:ment>,
     * <imemo:env>, <unknown>).  Generated object i has file i % 20, line
     * i % 13 and label Class if i % 3 == 0 else Foo.  (i % 20, i % 13)
     * repeats with period 260, so i in 260..299 meets i - 260; the label
     * is the same too when i % 3 == 1 (then (i - 260) % 3 == 2, both
     * Foo): i = 262, 265, ..., 298, 13 values.  300 - 13 + 5 = 292 groups
     * (shared/corpus/reference.py agrees), the largest of 2 objects each,
     * "(none):0:<hidden>" first by key. */
    assert_int_equal(a.groups1, 292);
    assert_string_equal(a.key0, "(none):0:<hidden>");
    assert_int_equal(a.count0, 2);
    /* gem: "gem<f % 7>-1.0" for file f, and "(none)": 8 groups; gem0..5
     * have 45 objects each, gem6 30, (none) 6: gem0 first by key */
    assert_int_equal(a.groups2, 8);
    assert_string_equal(a.gem0, "gem0-1.0");
    free(d.p);
}

static void
test_failure_injection_small(void **state)
{
    (void)state;
    text d = make_dump(40, 6);
    long calls = 0;
    inject_all(&d, NULL, &calls);
    print_message("small dump: %ld allocation calls injected\n", calls);
    free(d.p);
}

/* Big enough that every growth path runs: object columns beyond 4096,
 * interner and site table rehash, edge and value arrays. */
static void
test_failure_injection_growth(void **state)
{
    (void)state;
    text d = make_dump(5000, 1500);
    long calls = 0;
    inject_all(&d, NULL, &calls);
    print_message("growth dump: %ld allocation calls injected\n", calls);
    free(d.p);
}

/* The streaming fold on the parallel parser (per-slot folds on the
 * workers, merged at the end) and on one thread: every allocation failed
 * in turn gives NOMEM or the unfailed rows, and never leaks. */
static void
fold_rows(hscope_tally_t *t, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (uint64_t i = 0; i < hscope_tally_row_count(t) && len + 64 < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s=%llu/%llu;", hscope_tally_row_key(t, i),
                                (unsigned long long)hscope_tally_row_count_of(t, i),
                                (unsigned long long)hscope_tally_row_memsize(t, i));
}

static void
test_failure_injection_fold(void **state)
{
    (void)state;
    text d = make_dump(300, 20);
    char path[64];
    snprintf(path, sizeof(path), "/tmp/hscope-test-alloc-%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d.p, 1, d.len, f), d.len);
    assert_int_equal(fclose(f), 0);
    static char want[1 << 16], got[1 << 16];
    for (int threads = 1; threads <= 3; threads += 2) {
        chaos c;
        hscope_allocator al = { sizeof(al), 0, ch_malloc, ch_realloc, ch_free, &c };
        hscope_load_options o = HSCOPE_LOAD_OPTIONS_INIT;
        o.allocator = &al;
        o.threads = (uint32_t)threads;
        o.max_line_bytes = 1024; /* also the chunk size: many chunks */
        hscope_error err = HSCOPE_ERROR_INIT;
        hscope_tally_t *t = NULL;
        chaos_reset(&c, 0);
        assert_int_equal(hscope_tally_file(&t, path, "file:line:class", &o, NULL, &err), HSCOPE_OK);
        fold_rows(t, want, sizeof(want));
        hscope_tally_free(t);
        assert_int_equal(c.live, 0);
        long total = c.calls, failures = 0;
        for (long k = 1; k <= total; k++) {
            chaos_reset(&c, k);
            t = NULL;
            hscope_status st = hscope_tally_file(&t, path, "file:line:class", &o, NULL, &err);
            if (st == HSCOPE_OK) {
                fold_rows(t, got, sizeof(got));
                assert_string_equal(got, want);
                hscope_tally_free(t);
            } else {
                assert_int_equal(st, HSCOPE_ERR_NOMEM);
                assert_null(t);
                failures++;
            }
            if (c.live != 0)
                fail_msg("fold, %d threads: failing allocation %ld of %ld leaked %ld blocks",
                         threads, k, total, c.live);
        }
        assert_true(failures > 0);
        print_message("fold, %d thread(s): %ld allocation calls injected\n", threads, total);
    }
    unlink(path);
    free(d.p);
}

/* A budget check of every kind: the 3-dump diff, the dominator
 * tree and retained by class, tallies of three keys, the result itself. */
static void
check_rows(const hscope_check_t *k, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "over %llu;", (unsigned long long)hscope_check_over_count(k));
    for (uint64_t i = 0; i < hscope_check_rule_count(k) && len < n; i++) {
        hscope_check_rule r = HSCOPE_CHECK_RULE_INIT;
        assert_int_equal(hscope_check_rule_get(k, i, &r), HSCOPE_OK);
        len += (size_t)snprintf(buf + len, n - len, "%llu=%llu/%d;", (unsigned long long)r.line,
                                (unsigned long long)r.actual, r.found);
    }
}

static void
test_failure_injection_check(void **state)
{
    (void)state;
    static const char budget_text[] =
        "[total]\nobjects = 100\nretained = 1000\n[leaked]\nobjects = 0\nmemsize = 10\n"
        "[class.String]\nmemsize = 100\nretained = 100\n[gem.\"(app)\"]\nobjects = 1\n"
        "[site.\"app.rb:3:String\"]\nobjects = 1\n";
    hscope_budget_t *b = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_budget_parse(&b, budget_text, sizeof(budget_text) - 1, NULL, &err),
                     HSCOPE_OK);
    char paths[3][64];
    const char *pp[3];
    for (int i = 0; i < 3; i++) {
        text d = make_dump(200 + 50 * (size_t)i, 20);
        snprintf(paths[i], sizeof(paths[i]), "/tmp/hscope-test-alloc-%d-%d.json", (int)getpid(), i);
        FILE *f = fopen(paths[i], "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(d.p, 1, d.len, f), d.len);
        assert_int_equal(fclose(f), 0);
        free(d.p);
        pp[i] = paths[i];
    }
    static char want[1 << 12], got[1 << 12];
    for (int threads = 1; threads <= 3; threads += 2) {
        chaos c;
        hscope_allocator al = { sizeof(al), 0, ch_malloc, ch_realloc, ch_free, &c };
        hscope_load_options o = HSCOPE_LOAD_OPTIONS_INIT;
        o.allocator = &al;
        o.threads = (uint32_t)threads;
        hscope_check_t *k = NULL;
        chaos_reset(&c, 0);
        assert_int_equal(hscope_check_compute(&k, b, pp, 3, &o, NULL, &err), HSCOPE_OK);
        check_rows(k, want, sizeof(want));
        hscope_check_free(k);
        assert_int_equal(c.live, 0);
        long total = c.calls, failures = 0;
        for (long i = 1; i <= total; i++) {
            chaos_reset(&c, i);
            k = NULL;
            hscope_status st = hscope_check_compute(&k, b, pp, 3, &o, NULL, &err);
            if (st == HSCOPE_OK) {
                check_rows(k, got, sizeof(got));
                assert_string_equal(got, want);
                hscope_check_free(k);
            } else {
                if (st != HSCOPE_ERR_NOMEM)
                    fail_msg("check: failing allocation %ld of %ld: %s (%s)", i, total,
                             hscope_status_name(st), err.message);
                assert_null(k);
                failures++;
            }
            if (c.live != 0)
                fail_msg("check, %d threads: failing allocation %ld of %ld leaked %ld blocks",
                         threads, i, total, c.live);
        }
        assert_true(failures > 0);
        print_message("check, %d thread(s): %ld allocation calls injected\n", threads, total);
    }
    for (int i = 0; i < 3; i++)
        unlink(paths[i]);
    hscope_budget_free(b);
}

/* Failures also in strict mode and on gzip input. */
static void
test_failure_injection_gzip(void **state)
{
    (void)state;
    text d = make_dump(200, 10);
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    text g = { 0 };
    g.cap = deflateBound(&z, (uLong)d.len) + 64;
    g.p = malloc(g.cap);
    assert_non_null(g.p);
    z.next_in = (Bytef *)d.p;
    z.avail_in = (uInt)d.len;
    z.next_out = (Bytef *)g.p;
    z.avail_out = (uInt)g.cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    g.len = g.cap - z.avail_out;
    deflateEnd(&z);
    answers plain;
    chaos c;
    chaos_reset(&c, 0);
    assert_int_equal(full_run(&d, &c, &plain), 1);
    inject_all(&g, &plain, NULL);
    free(g.p);
    free(d.p);
}

/*
 * Regression test (found while writing this suite, now fixed): the allocator hooks must see every allocation
 * of a load ("Custom allocator for one handle and everything derived from
 * it"; src/README.md: all allocation goes through hscope__malloc so that
 * hooks and max_memory see everything).  zlib's inflate state (about
 * 7 KiB; plus a 32 KiB window once a stream spans several inflate calls)
 * is allocated with zlib's default malloc, because the reader leaves
 * z_stream.zalloc/zfree unset (src/io/reader.c, start()).  A gzip load
 * must therefore make at least one more allocation call, and peak at
 * least 4 KiB higher, than the same plain load.
 */
static void
test_hooks_see_zlib(void **state)
{
    (void)state;
    text d = make_dump(200, 10);
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)d.len) + 64, zlen;
    unsigned char *g = malloc(cap);
    assert_non_null(g);
    z.next_in = (Bytef *)d.p;
    z.avail_in = (uInt)d.len;
    z.next_out = g;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    zlen = cap - z.avail_out;
    deflateEnd(&z);

    chaos cp, cg;
    chaos_reset(&cp, 0);
    chaos_reset(&cg, 0);
    hscope_allocator ap = { sizeof(ap), 0, ch_malloc, ch_realloc, ch_free, &cp };
    hscope_allocator ag = { sizeof(ag), 0, ch_malloc, ch_realloc, ch_free, &cg };
    hscope_load_options o = HSCOPE_LOAD_OPTIONS_INIT;
    hscope_heap_t *h = NULL;
    o.allocator = &ap;
    assert_int_equal(hscope_heap_open_memory(&h, d.p, d.len, &o, NULL), HSCOPE_OK);
    hscope_heap_free(h);
    o.allocator = &ag;
    assert_int_equal(hscope_heap_open_memory(&h, g, zlen, &o, NULL), HSCOPE_OK);
    assert_int_equal(hscope_heap_object_count(h), 206);
    hscope_heap_free(h);
    assert_int_equal(cp.live, 0);
    assert_int_equal(cg.live, 0);
    print_message("plain: %ld calls, peak %zu; gzip: %ld calls, peak %zu\n", cp.calls,
                  cp.peak, cg.calls, cg.peak);
    assert_true(cg.calls >= cp.calls + 1);
    assert_true(cg.peak >= cp.peak + 4096);
    free(g);
    free(d.p);
}

/* max_memory counts what the hooks hand out: a cap just below the peak of
 * an uncapped load fails with NOMEM, a cap at the peak succeeds. */
static void
test_max_memory_matches_hooks(void **state)
{
    (void)state;
    text d = make_dump(1000, 50);
    chaos c;
    chaos_reset(&c, 0);
    hscope_allocator al = { sizeof(al), 0, ch_malloc, ch_realloc, ch_free, &c };
    hscope_load_options o = HSCOPE_LOAD_OPTIONS_INIT;
    o.allocator = &al;
    hscope_heap_t *h = NULL;
    assert_int_equal(hscope_heap_open_memory(&h, d.p, d.len, &o, NULL), HSCOPE_OK);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_heap_stats(h, &s), HSCOPE_OK);
    hscope_heap_free(h);
    size_t peak = c.peak;
    /* the hooks see the library's own 16-byte headers as part of n */
    assert_true(s.model_bytes + s.index_bytes <= peak);
    chaos_reset(&c, 0);
    o.max_memory = peak / 2;
    hscope_error err = HSCOPE_ERROR_INIT;
    h = (hscope_heap_t *)(uintptr_t)1;
    assert_int_equal(hscope_heap_open_memory(&h, d.p, d.len, &o, &err), HSCOPE_ERR_NOMEM);
    assert_null(h);
    assert_int_equal(c.live, 0);
    assert_true(c.peak <= peak / 2 + 16 * 256);
    chaos_reset(&c, 0);
    o.max_memory = peak;
    assert_int_equal(hscope_heap_open_memory(&h, d.p, d.len, &o, &err), HSCOPE_OK);
    hscope_heap_free(h);
    assert_int_equal(c.live, 0);
    free(d.p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_leak),
        cmocka_unit_test(test_failure_injection_small),
        cmocka_unit_test(test_failure_injection_growth),
        cmocka_unit_test(test_failure_injection_gzip),
        cmocka_unit_test(test_failure_injection_fold),
        cmocka_unit_test(test_failure_injection_check),
        cmocka_unit_test(test_hooks_see_zlib),
        cmocka_unit_test(test_max_memory_matches_hooks),
    };
    return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
