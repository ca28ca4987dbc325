/*
 * test_trust.c - answers a user can trust, through the public
 * header only: an empty leak set is empty; dumps that cannot be one
 * process's series are said (repeated, other processes, backwards); a
 * streamed or saved dump keeps its damage counts; one label per object;
 * the gem of every file layout; the dumper's objects left out of tallies
 * by the diff's rule.  Every expectation is computed by hand here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

static hscope_heap_t *
load(const char *text)
{
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    int st = hscope_heap_open_memory(&h, text, strlen(text), NULL, &err);
    if (st != HSCOPE_OK)
        fprintf(stderr, "load: %s\n", err.message);
    assert_int_equal(st, HSCOPE_OK);
    return h;
}

/* A growable text buffer for generated dumps. */
typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void
add(buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (b->p && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
}

/* A dump of `n` STRINGs at base + 0x28 * k (k = 0..n-1), generation gen,
 * with the class String and a ROOT. */
static char *
strings_dump(uint64_t base, unsigned n, unsigned gen)
{
    buf b = { NULL, 0, 0 };
    add(&b, "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x10\"]}\n");
    add(&b, "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n");
    for (unsigned k = 0; k < n; k++)
        add(&b, "{\"address\":\"0x%llx\",\"type\":\"STRING\",\"class\":\"0x10\",\"file\":"
                "\"app.rb\",\"line\":%u,\"generation\":%u,\"memsize\":40}\n",
            (unsigned long long)(base + 0x28ull * k), k % 7, gen);
    return b.p;
}

static void
write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* ------------------------------------------------------------------ */
/* 1. an empty leak set is empty                                       */
/* ------------------------------------------------------------------ */

static void
test_empty_leak_set_has_no_groups(void **state)
{
    (void)state;
    char *text = strings_dump(0x1000, 50, 2);
    hscope_heap_t *h = load(text);
    free(text);
    hscope_diff_t *d = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_diff_compute(&d, h, h, h, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_diff_count(d), 0);
    static const char *const keys[] = { "file:line:class", "class", "type", "gem" };
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        hscope_tally_t *t = NULL;
        assert_int_equal(hscope_diff_tally(&t, d, keys[k], NULL, &err), HSCOPE_OK);
        uint64_t c = 1, m = 1;
        hscope_tally_totals(t, &c, &m);
        assert_int_equal(hscope_tally_row_count(t), 0);
        assert_int_equal(hscope_tally_group_count(t), 0);
        assert_int_equal(c, 0);
        assert_int_equal(m, 0);
        const hscope_id *ids;
        uint64_t n;
        assert_int_equal(hscope_tally_row_objects(t, 0, &ids, &n), HSCOPE_ERR_NOT_FOUND);
        hscope_tally_free(t);
    }
    /* an empty subset is empty too, with or without an id array */
    hscope_tally_t *t = NULL;
    assert_int_equal(hscope_tally_subset(&t, h, "class", NULL, 0, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_tally_group_count(t), 0);
    hscope_tally_free(t);
    hscope_diff_free(d);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* 2. series checks                                                    */
/* ------------------------------------------------------------------ */

static uint32_t
diff_warnings(hscope_heap_t *a, hscope_heap_t *b, hscope_heap_t *c, char *text, size_t n)
{
    hscope_diff_t *d = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_diff_compute(&d, a, b, c, NULL, &err), HSCOPE_OK);
    uint32_t w = hscope_diff_warnings(d);
    snprintf(text, n, "%s", hscope_diff_warning_text(d));
    hscope_diff_free(d);
    return w;
}

#define SERIES (HSCOPE_DIFF_WARN_DIFFERENT_PROCESS | HSCOPE_DIFF_WARN_REPEATED | \
                HSCOPE_DIFF_WARN_BACKWARDS)

static void
test_series_in_order_is_quiet(void **state)
{
    (void)state;
    /* one process: each dump keeps the last one's objects and adds some */
    char *t1 = strings_dump(0x10000, 100, 2), *t2 = strings_dump(0x10000, 120, 2),
         *t3 = strings_dump(0x10000, 140, 2);
    hscope_heap_t *a = load(t1), *b = load(t2), *c = load(t3);
    char text[2048];
    assert_int_equal(diff_warnings(a, b, c, text, sizeof(text)) & SERIES, 0);
    hscope_heap_free(a);
    hscope_heap_free(b);
    hscope_heap_free(c);
    free(t1);
    free(t2);
    free(t3);
}

static void
test_series_repeated(void **state)
{
    (void)state;
    char *t = strings_dump(0x10000, 100, 2);
    hscope_heap_t *a = load(t), *b = load(t), *c = load(t);
    char text[2048];
    /* one heap three times, and three loads of the same text */
    uint32_t w = diff_warnings(a, a, a, text, sizeof(text));
    assert_true(w & HSCOPE_DIFF_WARN_REPEATED);
    assert_non_null(strstr(text, "same content"));
    w = diff_warnings(a, b, c, text, sizeof(text));
    assert_int_equal(w & SERIES, HSCOPE_DIFF_WARN_REPEATED);
    assert_non_null(strstr(text, "snapshot A and snapshot B have the same content (101 objects"));
    hscope_heap_free(a);
    hscope_heap_free(b);
    hscope_heap_free(c);
    free(t);
}

/* Two dumps of 100 objects of which `shared` have the same address and
 * type: below 5% of the smaller one, they are other processes' dumps. */
static uint32_t
shared_objects(unsigned shared)
{
    char *t1 = strings_dump(0x100000, 99, 2);     /* + the class = 100 objects */
    /* the second: `shared` of the first's addresses (the class among them
     * when shared > 0), the rest elsewhere */
    buf b = { NULL, 0, 0 };
    add(&b, "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x%s\"]}\n", shared ? "10" : "20");
    add(&b, "{\"address\":\"0x%s\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n",
        shared ? "10" : "20");
    for (unsigned k = 0; k + 1 < 100; k++) {
        uint64_t addr = k + 1 < shared ? 0x100000 + 0x28ull * k : 0x900000 + 0x28ull * k;
        add(&b, "{\"address\":\"0x%llx\",\"type\":\"STRING\",\"class\":\"0x%s\",\"generation\":3,"
                "\"memsize\":40}\n", (unsigned long long)addr, shared ? "10" : "20");
    }
    hscope_heap_t *x = load(t1), *y = load(b.p);
    hscope_fingerprint_t *fx = NULL, *fy = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_fingerprint(&fx, x, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_heap_fingerprint(&fy, y, NULL, &err), HSCOPE_OK);
    const hscope_fingerprint_t *fps[2] = { fx, fy };
    char text[1024];
    uint32_t w = hscope_series_check(fps, NULL, 2, text, sizeof(text));
    if (w & HSCOPE_DIFF_WARN_DIFFERENT_PROCESS) {
        char want[64];
        snprintf(want, sizeof(want), "dump 1 and dump 2 share only %u.0%%", shared);
        assert_non_null(strstr(text, want));
    }
    hscope_fingerprint_free(fx);
    hscope_fingerprint_free(fy);
    hscope_heap_free(x);
    hscope_heap_free(y);
    free(t1);
    free(b.p);
    return w;
}

static void
test_series_different_processes(void **state)
{
    (void)state;
    assert_int_equal(shared_objects(0), HSCOPE_DIFF_WARN_DIFFERENT_PROCESS);
    assert_int_equal(shared_objects(4), HSCOPE_DIFF_WARN_DIFFERENT_PROCESS);
    assert_int_equal(shared_objects(5), 0);   /* 5%: not below the threshold */
    assert_int_equal(shared_objects(60), 0);
}

static void
test_series_backwards_by_generation(void **state)
{
    (void)state;
    /* the same objects, but the later dump's newest generation is older */
    char *t1 = strings_dump(0x10000, 100, 9), *t2 = strings_dump(0x10000, 100, 4);
    hscope_heap_t *a = load(t1), *b = load(t2);
    char text[2048];
    uint32_t w = diff_warnings(a, b, NULL, text, sizeof(text));
    assert_int_equal(w & SERIES, HSCOPE_DIFF_WARN_BACKWARDS);
    assert_non_null(strstr(text, "snapshot B comes after snapshot A, but its newest object is "
                                 "older (generation 4, before 9)"));
    /* in order: quiet */
    w = diff_warnings(b, a, NULL, text, sizeof(text));
    assert_int_equal(w & SERIES, 0);
    hscope_heap_free(a);
    hscope_heap_free(b);
    free(t1);
    free(t2);
}

/* Files: the same file, and mtimes running backwards (untraced dumps),
 * through hscope_diff_files and through streamed tallies' fingerprints. */
static void
test_series_files(void **state)
{
    (void)state;
    char p[3][96];
    for (int i = 0; i < 3; i++)
        snprintf(p[i], sizeof(p[i]), "/tmp/hscope-trust-%d-%d.json", (int)getpid(), i);
    /* untraced dumps: no generation, so only the mtime can tell the order */
    const char *d1 = "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x10\"]}\n"
                     "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\"}\n"
                     "{\"address\":\"0x100\",\"type\":\"STRING\",\"class\":\"0x10\"}\n";
    const char *d2 = "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x10\"]}\n"
                     "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\"}\n"
                     "{\"address\":\"0x100\",\"type\":\"STRING\",\"class\":\"0x10\"}\n"
                     "{\"address\":\"0x128\",\"type\":\"STRING\",\"class\":\"0x10\"}\n";
    write_file(p[0], d1, strlen(d1));
    write_file(p[1], d2, strlen(d2));
    struct timeval tv[2] = { { 1700000100, 0 }, { 1700000100, 0 } };
    assert_int_equal(utimes(p[0], tv), 0);     /* the first written last */
    tv[0].tv_sec = tv[1].tv_sec = 1700000000;
    assert_int_equal(utimes(p[1], tv), 0);
    hscope_diff_t *d = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_diff_files(&d, p[0], p[1], NULL, NULL, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_diff_warnings(d) & SERIES, HSCOPE_DIFF_WARN_BACKWARDS);
    assert_non_null(strstr(hscope_diff_warning_text(d), "but it was written 100 s earlier"));
    hscope_diff_free(d);
    /* the same file twice */
    assert_int_equal(hscope_diff_files(&d, p[1], p[1], p[1], NULL, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_diff_warnings(d) & SERIES, HSCOPE_DIFF_WARN_REPEATED);
    assert_non_null(strstr(hscope_diff_warning_text(d), "are the same file"));
    hscope_diff_free(d);
    /* streamed tallies carry the same fingerprints, when asked */
    hscope_tally_t *t[2] = { NULL, NULL };
    hscope_tally_options fo = HSCOPE_TALLY_OPTIONS_INIT;
    assert_int_equal(hscope_tally_file(&t[0], p[0], "type", NULL, &fo, &err), HSCOPE_OK);
    assert_null(hscope_tally_fingerprint(t[0]));
    hscope_tally_free(t[0]);
    fo.flags = HSCOPE_TALLY_FINGERPRINT;
    for (int i = 0; i < 2; i++)
        assert_int_equal(hscope_tally_file(&t[i], p[i], "type", NULL, &fo, &err), HSCOPE_OK);
    const hscope_fingerprint_t *fps[3] = { hscope_tally_fingerprint(t[0]),
                                           hscope_tally_fingerprint(t[1]), NULL };
    assert_non_null(fps[0]);
    const char *names[3] = { "first", "second", "third" };
    char text[512];
    assert_int_equal(hscope_series_check(fps, names, 2, text, sizeof(text)),
                     HSCOPE_DIFF_WARN_BACKWARDS);
    assert_non_null(strstr(text, "second comes after first"));
    /* one fingerprint twice, without a file: the same dump */
    hscope_heap_t *hx = load(d2);
    hscope_fingerprint_t *fx = NULL;
    assert_int_equal(hscope_heap_fingerprint(&fx, hx, NULL, &err), HSCOPE_OK);
    const hscope_fingerprint_t *twice[2] = { fx, fx };
    assert_int_equal(hscope_series_check(twice, NULL, 2, text, sizeof(text)),
                     HSCOPE_DIFF_WARN_REPEATED);
    assert_string_equal(text, "dump 1 and dump 2 are the same dump given twice: nothing can "
                              "have changed between them");
    hscope_fingerprint_free(fx);
    hscope_heap_free(hx);
    /* NULL entries are skipped; a copy outlives its tally */
    hscope_fingerprint_t *copy = NULL;
    assert_int_equal(hscope_fingerprint_copy(&copy, fps[1], &err), HSCOPE_OK);
    hscope_tally_free(t[1]);
    const hscope_fingerprint_t *fps2[3] = { fps[0], NULL, copy };
    assert_int_equal(hscope_series_check(fps2, NULL, 3, NULL, 0), HSCOPE_DIFF_WARN_BACKWARDS);
    /* a tally of a loaded heap has none */
    hscope_heap_t *h = load(d1);
    hscope_tally_t *th = NULL;
    assert_int_equal(hscope_tally_compute(&th, h, "type", NULL, &err), HSCOPE_OK);
    assert_null(hscope_tally_fingerprint(th));
    hscope_tally_free(th);
    hscope_heap_free(h);
    hscope_fingerprint_free(copy);
    hscope_tally_free(t[0]);
    for (int i = 0; i < 2; i++)
        unlink(p[i]);
}

/* More objects than the sample holds (4096): the shared share is still
 * told apart, on one thread and on several (the workers' samples merged). */
static void
test_series_sampled(void **state)
{
    (void)state;
    char p[3][96];
    char *text[3] = { strings_dump(0x7f0000000000ull, 30000, 3),
                      strings_dump(0x7f0000000000ull + 0x28ull * 15000, 30000, 4),
                      strings_dump(0x550000000000ull, 30000, 5) };
    for (int i = 0; i < 3; i++) {
        snprintf(p[i], sizeof(p[i]), "/tmp/hscope-trust-s%d-%d.json", (int)getpid(), i);
        write_file(p[i], text[i], strlen(text[i]));
    }
    for (uint32_t threads = 1; threads <= 4; threads += 3) {
        hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
        lo.threads = threads;
        hscope_tally_options fo = HSCOPE_TALLY_OPTIONS_INIT;
        fo.flags = HSCOPE_TALLY_FINGERPRINT;
        hscope_tally_t *t[3];
        hscope_error err = HSCOPE_ERROR_INIT;
        for (int i = 0; i < 3; i++)
            assert_int_equal(hscope_tally_file(&t[i], p[i], "type", &lo, &fo, &err), HSCOPE_OK);
        const hscope_fingerprint_t *fps[3];
        for (int i = 0; i < 3; i++)
            fps[i] = hscope_tally_fingerprint(t[i]);
        char w[1024];
        /* half shared (about 50%), then none: the second pair only */
        assert_int_equal(hscope_series_check(fps, NULL, 2, w, sizeof(w)), 0);
        assert_int_equal(hscope_series_check(fps + 1, NULL, 2, w, sizeof(w)),
                         HSCOPE_DIFF_WARN_DIFFERENT_PROCESS);
        assert_non_null(strstr(w, "share only 0.0%"));
        for (int i = 0; i < 3; i++)
            hscope_tally_free(t[i]);
    }
    /* the loaded heaps' fingerprints agree */
    hscope_heap_t *h0 = load(text[0]), *h1 = load(text[1]);
    char w[2048];
    assert_int_equal(diff_warnings(h0, h1, NULL, w, sizeof(w)) & SERIES, 0);
    hscope_heap_free(h0);
    hscope_heap_free(h1);
    for (int i = 0; i < 3; i++) {
        unlink(p[i]);
        free(text[i]);
    }
}

/* ------------------------------------------------------------------ */
/* 3. damage counts: streamed tallies, saved heaps                     */
/* ------------------------------------------------------------------ */

static void
test_damage_counts_kept(void **state)
{
    (void)state;
    const char *text = "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x10\"]}\n"
                       "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\"}\n"
                       "{\"address\":\"0x100\",\"type\":\"STRING\",\"class\":\"0x10\"}\n"
                       "not json\n"
                       "{\"address\":\"0x128\",\"type\":\"STRING\",\"cla";
    char p[96], ix[112];
    snprintf(p, sizeof(p), "/tmp/hscope-trust-d-%d.json", (int)getpid());
    snprintf(ix, sizeof(ix), "%s.hsx", p);
    write_file(p, text, strlen(text));
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_tally_t *t = NULL;
    assert_int_equal(hscope_tally_file(&t, p, "type", NULL, NULL, &err), HSCOPE_OK);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_tally_stats(t, &s), HSCOPE_OK);
    assert_int_equal(s.lines, 5);
    assert_int_equal(s.objects, 2);
    assert_int_equal(s.skipped_lines, 2);
    assert_int_equal(s.truncated, 1);
    assert_int_equal(hscope_tally_skipped(t, HSCOPE_SKIP_BAD_JSON), 1);
    assert_int_equal(hscope_tally_skipped(t, HSCOPE_SKIP_TRUNCATED), 1);
    assert_int_equal(hscope_tally_skipped(t, 99), 0);
    hscope_tally_free(t);
    /* a saved heap keeps them, and so do its tallies */
    hscope_heap_t *h = NULL, *saved = NULL;
    assert_int_equal(hscope_heap_open_file(&h, p, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_heap_save(h, ix, p, &err), HSCOPE_OK);
    assert_int_equal(hscope_heap_open_saved(&saved, ix, p, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_tally_compute(&t, saved, "type", NULL, &err), HSCOPE_OK);
    hscope_load_stats s2 = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_tally_stats(t, &s2), HSCOPE_OK);
    assert_int_equal(s2.from_index, 1);
    assert_int_equal(s2.skipped_lines, 2);
    assert_int_equal(s2.truncated, 1);
    assert_int_equal(hscope_tally_skipped(t, HSCOPE_SKIP_BAD_JSON), 1);
    /* a caller's smaller struct: only its size is written */
    hscope_load_stats s3;
    memset(&s3, 0xAB, sizeof(s3));
    s3.size = offsetof(hscope_load_stats, lines) + sizeof(uint64_t);
    assert_int_equal(hscope_tally_stats(t, &s3), HSCOPE_OK);
    assert_int_equal(s3.lines, 5);
    assert_int_equal(s3.objects, 0xABABABABABABABABull);
    hscope_tally_free(t);
    hscope_heap_free(saved);
    hscope_heap_free(h);
    unlink(ix);
    unlink(p);
}

/* ------------------------------------------------------------------ */
/* 4. one label per object                                             */
/* ------------------------------------------------------------------ */

static void
test_object_labels(void **state)
{
    (void)state;
    hscope_heap_t *h = load(
        "{\"address\":\"0x20\",\"type\":\"CLASS\",\"name\":\"Class\"}\n"
        "{\"address\":\"0x30\",\"type\":\"CLASS\",\"name\":\"Module\"}\n"
        "{\"address\":\"0x100\",\"type\":\"CLASS\",\"class\":\"0x20\",\"name\":\"PostsController\"}\n"
        "{\"address\":\"0x108\",\"type\":\"MODULE\",\"class\":\"0x30\",\"name\":\"Concurrent\"}\n"
        "{\"address\":\"0x110\",\"type\":\"CLASS\",\"class\":\"0x20\"}\n"
        "{\"address\":\"0x118\",\"type\":\"OBJECT\",\"class\":\"0x100\"}\n"
        "{\"address\":\"0x120\",\"type\":\"IMEMO\",\"imemo_type\":\"env\"}\n"
        "{\"address\":\"0x128\",\"type\":\"STRING\"}\n");
    static const struct { uint64_t addr; const char *label, *class_label; } want[] = {
        { 0x100, "PostsController", "Class" },
        { 0x108, "Concurrent", "Module" },
        { 0x110, "<anonymous>", "Class" },
        { 0x118, "PostsController", "PostsController" },
        { 0x120, "<imemo:env>", "<imemo:env>" },
        { 0x128, "<hidden>", "<hidden>" },
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        hscope_id id;
        assert_int_equal(hscope_heap_find(h, want[i].addr, &id), HSCOPE_OK);
        assert_string_equal(hscope_heap_object_label(h, id), want[i].label);
        assert_string_equal(hscope_heap_object_class_label(h, id), want[i].class_label);
    }
    assert_null(hscope_heap_object_label(h, 1000));
    assert_null(hscope_heap_object_label(NULL, 0));
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* 7. the gem of every layout                                          */
/* ------------------------------------------------------------------ */

static void
test_gem_layouts(void **state)
{
    (void)state;
    static const struct { const char *file, *gem; } files[] = {
        { "<internal:kernel>", "(ruby)" },
        { "/usr/lib/ruby/3.1.0/set.rb", "(stdlib)" },
        { "/usr/local/lib/ruby/gems/3.3.0/gems/rack-3.0.8/lib/rack.rb", "rack-3.0.8" },
        { "/app/vendor/bundle/ruby/3.2.0/bundler/gems/rails-8d3c2a1f0b9e/x.rb",
          "rails-8d3c2a1f0b9e" },
        { "/usr/share/rubygems-integration/all/gems/rake-13.0.6/lib/rake.rb", "rake-13.0.6" },
        { "/usr/lib/ruby/vendor_ruby/rubygems/specification.rb", "rubygems" },
        { "/srv/app/models/user.rb", "(app)" },
        { "/srv/app/main.rb", "(app)" },
    };
    size_t nf = sizeof(files) / sizeof(files[0]);
    buf b = { NULL, 0, 0 };
    for (size_t i = 0; i < nf; i++)
        add(&b, "{\"address\":\"0x%zx\",\"type\":\"STRING\",\"file\":\"%s\",\"line\":1,"
                "\"generation\":1,\"memsize\":%zu}\n", 0x100 + 8 * i, files[i].file, i + 1);
    add(&b, "{\"address\":\"0x900\",\"type\":\"STRING\",\"memsize\":100}\n");
    hscope_heap_t *h = load(b.p);
    char p[96];
    snprintf(p, sizeof(p), "/tmp/hscope-trust-g-%d.json", (int)getpid());
    write_file(p, b.p, b.len);
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_tally_t *t[2] = { NULL, NULL };
    assert_int_equal(hscope_tally_compute(&t[0], h, "gem", NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_tally_file(&t[1], p, "gem", NULL, NULL, &err), HSCOPE_OK);
    for (int k = 0; k < 2; k++) {
        /* (app) twice (count 2, memsize 7 + 8), (none) once, the rest once */
        assert_int_equal(hscope_tally_group_count(t[k]), nf);
        for (uint64_t r = 0; r < hscope_tally_row_count(t[k]); r++) {
            const char *key = hscope_tally_row_key(t[k], r);
            uint64_t cnt = 0, mem = 0;
            if (strcmp(key, "(none)") == 0) {
                cnt = 1;
                mem = 100;
            }
            for (size_t i = 0; i < nf; i++)
                if (strcmp(files[i].gem, key) == 0) {
                    cnt++;
                    mem += i + 1;
                }
            if (cnt != hscope_tally_row_count_of(t[k], r) ||
                mem != hscope_tally_row_memsize(t[k], r))
                fail_msg("%s tally: gem %s: %llu / %llu, want %llu / %llu", k ? "streamed" : "heap",
                         key, (unsigned long long)hscope_tally_row_count_of(t[k], r),
                         (unsigned long long)hscope_tally_row_memsize(t[k], r),
                         (unsigned long long)cnt, (unsigned long long)mem);
        }
        hscope_tally_free(t[k]);
    }
    hscope_heap_free(h);
    unlink(p);
    free(b.p);
}

/* ------------------------------------------------------------------ */
/* 8. the dumper's objects                                             */
/* ------------------------------------------------------------------ */

#define DUMPER_DUMP                                                                        \
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x10\"]}\n"                        \
    "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n"        \
    "{\"address\":\"0x100\",\"type\":\"STRING\",\"class\":\"0x10\",\"file\":\"/app/a.rb\","  \
    "\"line\":1,\"method\":\"dump\",\"generation\":5,\"memsize\":40}\n"                      \
    "{\"address\":\"0x128\",\"type\":\"STRING\",\"class\":\"0x10\",\"file\":"                 \
    "\"/usr/lib/ruby/3.1.0/objspace.rb\",\"line\":74,\"method\":\"dump_all\","               \
    "\"generation\":5,\"memsize\":40}\n"                                                     \
    "{\"address\":\"0x150\",\"type\":\"STRING\",\"class\":\"0x10\",\"file\":"                 \
    "\"/gems/heapscope-0.2.0/lib/heapscope/snapshot.rb\",\"line\":80,\"method\":\"capture\"," \
    "\"generation\":5,\"memsize\":40}\n"                                                     \
    "{\"address\":\"0x178\",\"type\":\"ARRAY\",\"class\":\"0x10\",\"file\":"                  \
    "\"/gems/heapscope-0.2.0/lib/heapscope/auto.rb\",\"line\":9,\"method\":\"write_dump\","  \
    "\"generation\":5,\"memsize\":40}\n"

static void
test_dumper_left_out_of_tallies(void **state)
{
    (void)state;
    const char *text = DUMPER_DUMP;
    hscope_heap_t *h = load(text);
    char p[96];
    snprintf(p, sizeof(p), "/tmp/hscope-trust-u-%d.json", (int)getpid());
    write_file(p, text, strlen(text));
    hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
    o.flags = HSCOPE_TALLY_SKIP_DUMPER;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_tally_t *t[3] = { NULL, NULL, NULL };
    hscope_id all[6] = { 0, 1, 2, 3, 4 };
    assert_int_equal(hscope_tally_compute(&t[0], h, "file", &o, &err), HSCOPE_OK);
    assert_int_equal(hscope_tally_subset(&t[1], h, "file", all, 5, &o, &err), HSCOPE_OK);
    assert_int_equal(hscope_tally_file(&t[2], p, "file", NULL, &o, &err), HSCOPE_OK);
    for (int k = 0; k < 3; k++) {
        uint64_t n, m;
        hscope_tally_totals(t[k], &n, &m);
        /* left: the class (no file) and /app/a.rb's method "dump" */
        assert_int_equal(n, 2);
        assert_int_equal(m, 140);
        assert_int_equal(hscope_tally_excluded(t[k]), 3);
        assert_int_equal(hscope_tally_row_count(t[k]), 2);
        assert_string_equal(hscope_tally_row_key(t[k], 0), "(none)");
        assert_string_equal(hscope_tally_row_key(t[k], 1), "/app/a.rb");
        hscope_tally_free(t[k]);
    }
    /* members of a subset tally are the kept objects */
    assert_int_equal(hscope_tally_subset(&t[1], h, "type", all, 5, &o, &err), HSCOPE_OK);
    const hscope_id *ids;
    uint64_t nids;
    assert_string_equal(hscope_tally_row_key(t[1], 0), "CLASS");
    assert_int_equal(hscope_tally_row_objects(t[1], 1, &ids, &nids), HSCOPE_OK);
    assert_int_equal(nids, 1);
    assert_int_equal(ids[0], 1);
    hscope_tally_free(t[1]);
    /* without the flag every object counts */
    assert_int_equal(hscope_tally_compute(&t[0], h, "file", NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_tally_excluded(t[0]), 0);
    uint64_t n;
    hscope_tally_totals(t[0], &n, NULL);
    assert_int_equal(n, 5);
    hscope_tally_free(t[0]);
    /* an unknown flag is refused */
    o.flags = 0x80;
    assert_int_equal(hscope_tally_compute(&t[0], h, "file", &o, &err), HSCOPE_ERR_UNSUPPORTED);
    assert_int_equal(hscope_tally_file(&t[0], p, "file", NULL, &o, &err), HSCOPE_ERR_UNSUPPORTED);
    /* the diff: the same rule (0x100, method "dump" in the app, is a leak) */
    hscope_heap_t *a = load("{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x10\"]}\n"
                            "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\"}\n");
    hscope_diff_t *d = NULL;
    assert_int_equal(hscope_diff_compute(&d, a, h, NULL, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_diff_count(d), 1);
    assert_int_equal(hscope_heap_object_address(h, hscope_diff_objects(d)[0]), 0x100);
    assert_int_equal(hscope_diff_excluded(d), 3);
    hscope_diff_free(d);
    hscope_heap_free(a);
    hscope_heap_free(h);
    unlink(p);
}

/* ------------------------------------------------------------------ */
/* 9. Ruby's allocation tracer                                         */
/* ------------------------------------------------------------------ */

/* What ObjectSpace.trace_object_allocations_start leaves on the heap: a
 * DATA object of class Object (struct ObjectTracing/allocation_info_tracer)
 * holding its table, here 5000 bytes and one string only it references;
 * beside it two plain Objects of the application, 40 bytes each. */
#define TRACER_DUMP                                                                        \
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x200\",\"0x300\",\"0x400\"]}\n"  \
    "{\"address\":\"0x20\",\"type\":\"CLASS\",\"name\":\"Object\",\"memsize\":100}\n"        \
    "{\"address\":\"0x30\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n"        \
    "{\"address\":\"0x200\",\"type\":\"DATA\",\"class\":\"0x20\",\"struct\":"                \
    "\"ObjectTracing/allocation_info_tracer\",\"references\":[\"0x280\"],\"memsize\":5000}\n" \
    "{\"address\":\"0x280\",\"type\":\"STRING\",\"class\":\"0x30\",\"memsize\":60}\n"        \
    "{\"address\":\"0x300\",\"type\":\"OBJECT\",\"class\":\"0x20\",\"file\":\"/app/a.rb\","  \
    "\"line\":3,\"method\":\"make\",\"memsize\":40}\n"                                        \
    "{\"address\":\"0x400\",\"type\":\"OBJECT\",\"class\":\"0x20\",\"file\":\"/app/a.rb\","  \
    "\"line\":3,\"method\":\"make\",\"memsize\":40}\n"

/* The row of a tally whose key is `key` (fails if none). */
static uint64_t
row_of(const hscope_tally_t *t, const char *key)
{
    for (uint64_t r = 0; r < hscope_tally_row_count(t); r++)
        if (strcmp(hscope_tally_row_key(t, r), key) == 0)
            return r;
    fail_msg("no row %s", key);
    return 0;
}

/* The tally of key `by` on h (loaded) or on file p (streamed). */
static hscope_tally_t *
tracer_tally(hscope_heap_t *h, const char *p, const char *by, uint32_t flags)
{
    hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
    o.flags = flags;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_tally_t *t = NULL;
    if (h)
        assert_int_equal(hscope_tally_compute(&t, h, by, &o, &err), HSCOPE_OK);
    else
        assert_int_equal(hscope_tally_file(&t, p, by, NULL, &o, &err), HSCOPE_OK);
    return t;
}

static void
test_tracer_labelled_and_left_out(void **state)
{
    (void)state;
    const char *text = TRACER_DUMP;
    hscope_heap_t *h = load(text);
    char p[96];
    snprintf(p, sizeof(p), "/tmp/hscope-trust-tr-%d.json", (int)getpid());
    write_file(p, text, strlen(text));
    /* object 2 (0x200) is the tracer: labelled as such, not "Object" */
    assert_int_equal(hscope_heap_object_address(h, 2), 0x200);
    assert_string_equal(hscope_heap_object_class_label(h, 2), "<allocation tracer>");
    hscope_id obj;
    assert_int_equal(hscope_heap_find(h, 0x300, &obj), HSCOPE_OK);
    assert_string_equal(hscope_heap_object_class_label(h, obj), "Object");
    for (int streamed = 0; streamed < 2; streamed++) {
        hscope_heap_t *src = streamed ? NULL : h;
        /* kept (no flag): a row of its own, under its label */
        hscope_tally_t *t = tracer_tally(src, p, "class", 0);
        uint64_t n, m, tn = 9, tm = 9;
        assert_int_equal(hscope_tally_row_count(t), 4); /* and <hidden>, String */
        assert_int_equal(hscope_tally_row_count_of(t, row_of(t, "Object")), 2);
        assert_int_equal(hscope_tally_row_memsize(t, row_of(t, "Object")), 80);
        assert_int_equal(hscope_tally_row_count_of(t, row_of(t, "<allocation tracer>")), 1);
        assert_int_equal(hscope_tally_row_memsize(t, row_of(t, "<allocation tracer>")), 5000);
        hscope_tally_excluded_tracer(t, &tn, &tm);
        assert_int_equal(tn, 0);
        assert_int_equal(tm, 0);
        hscope_tally_free(t);
        /* left out: in no row, not in the totals, counted */
        t = tracer_tally(src, p, "class", HSCOPE_TALLY_SKIP_TRACER);
        hscope_tally_totals(t, &n, &m);
        assert_int_equal(n, 5);   /* 2 classes, the string, 2 Objects */
        assert_int_equal(m, 340);
        for (uint64_t r = 0; r < hscope_tally_row_count(t); r++)
            assert_string_not_equal(hscope_tally_row_key(t, r), "<allocation tracer>");
        hscope_tally_excluded_tracer(t, &tn, &tm);
        assert_int_equal(tn, 1);
        assert_int_equal(tm, 5000);
        assert_int_equal(hscope_tally_excluded(t), 0);
        hscope_tally_free(t);
        /* by site: the tracer was not under (none):0:Object either */
        t = tracer_tally(src, p, "file:line:class", HSCOPE_TALLY_SKIP_TRACER |
                                                    HSCOPE_TALLY_SKIP_DUMPER);
        for (uint64_t r = 0; r < hscope_tally_row_count(t); r++)
            assert_int_not_equal(hscope_tally_row_memsize(t, r), 5000 + 0);
        hscope_tally_totals(t, &n, &m);
        assert_int_equal(m, 340);
        hscope_tally_free(t);
    }
    /* retained per class: the tracer, the string only it holds and that
     * string's class (reached only through the string's class edge) are
     * left out with HSCOPE_TALLY_SKIP_TRACER, and counted */
    hscope_domtree_t *d = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_domtree_compute(&d, h, NULL, &err), HSCOPE_OK);
    hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
    hscope_tally_t *t = NULL;
    assert_int_equal(hscope_domtree_tally(&t, d, "class", &o, &err), HSCOPE_OK);
    assert_string_equal(hscope_tally_row_key(t, 0), "<allocation tracer>");
    assert_int_equal(hscope_tally_row_memsize(t, 0), 5160);
    assert_int_equal(hscope_tally_row_count_of(t, 0), 3);
    hscope_tally_free(t);
    o.flags = HSCOPE_TALLY_SKIP_TRACER;
    assert_int_equal(hscope_domtree_tally(&t, d, "class", &o, &err), HSCOPE_OK);
    uint64_t tn, tm;
    hscope_tally_excluded_tracer(t, &tn, &tm);
    assert_int_equal(tn, 3);
    assert_int_equal(tm, 5160);
    for (uint64_t r = 0; r < hscope_tally_row_count(t); r++) {
        assert_string_not_equal(hscope_tally_row_key(t, r), "<allocation tracer>");
        assert_string_not_equal(hscope_tally_row_key(t, r), "String");
    }
    hscope_tally_free(t);
    o.flags = HSCOPE_TALLY_SKIP_DUMPER; /* still refused here */
    assert_int_equal(hscope_domtree_tally(&t, d, "class", &o, &err), HSCOPE_ERR_UNSUPPORTED);
    hscope_domtree_free(d);
    /* a saved index keeps the label */
    char ix[112];
    snprintf(ix, sizeof(ix), "%s.hsx", p);
    assert_int_equal(hscope_heap_save(h, ix, NULL, &err), HSCOPE_OK);
    hscope_heap_t *hi = NULL;
    assert_int_equal(hscope_heap_open_saved(&hi, ix, NULL, NULL, &err), HSCOPE_OK);
    assert_string_equal(hscope_heap_object_class_label(hi, 2), "<allocation tracer>");
    hscope_heap_free(hi);
    unlink(ix);
    hscope_heap_free(h);
    unlink(p);
}

/* An options struct of 0.1 (16 bytes: no flags) is still accepted. */
static void
test_tally_options_of_0_1(void **state)
{
    (void)state;
    hscope_heap_t *h = load(DUMPER_DUMP);
    struct { uint32_t size, sort; uint64_t top; } old = { 16, HSCOPE_SORT_COUNT, 1 };
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_tally_compute(&t, h, "file", (const hscope_tally_options *)&old,
                                          &err), HSCOPE_OK);
    assert_int_equal(hscope_tally_row_count(t), 1);
    assert_int_equal(hscope_tally_excluded(t), 0);
    hscope_tally_free(t);
    hscope_heap_free(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_leak_set_has_no_groups),
        cmocka_unit_test(test_series_in_order_is_quiet),
        cmocka_unit_test(test_series_repeated),
        cmocka_unit_test(test_series_different_processes),
        cmocka_unit_test(test_series_backwards_by_generation),
        cmocka_unit_test(test_series_files),
        cmocka_unit_test(test_series_sampled),
        cmocka_unit_test(test_damage_counts_kept),
        cmocka_unit_test(test_object_labels),
        cmocka_unit_test(test_gem_layouts),
        cmocka_unit_test(test_dumper_left_out_of_tallies),
        cmocka_unit_test(test_tally_options_of_0_1),
        cmocka_unit_test(test_tracer_labelled_and_left_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
