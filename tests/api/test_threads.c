/*
 * test_threads.c - a loaded heap is immutable and may be shared: N threads
 * run different analyses on one heap at once (tallies, streamed tallies,
 * reverse references built lazily, dominator trees with their lazy
 * children, paths, holders, diffs against the same heap) and every thread
 * must get exactly the answer a single thread gets; an export writes its
 * two big tables on two threads, the same bytes as on one.  Run under
 * ThreadSanitizer by scripts/test.sh (suite 'threads').
 *
 * Usage: api_threads DUMP [--skip-missing]
 * (meson runs it on our leak workload's heap_3.json and, as threads-corpus,
 * on the corpus's Ruby 3.0 fixture: --skip-missing exits 77, skipped, when
 * DUMP does not exist.)
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

#define NTHREADS 8
#define ROUNDS 3

static const char *dump_path;
static hscope_heap_t *heap;

typedef struct answers {
    uint64_t tally_rows, tally_first_count;
    uint64_t referrers_sum;
    uint64_t retained_top, reachable;
    uint64_t path_len_sum;
    uint64_t holders;
    uint64_t diff_count;
    uint64_t stream_rows;
} answers;

static void
compute(answers *a, int which)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    uint64_t n = hscope_heap_object_count(heap);
    memset(a, 0, sizeof(*a));
    if (which == 0 || which < 0) {
        hscope_tally_t *t = NULL;
        hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
        assert_int_equal(hscope_tally_compute(&t, heap, "file:line:class", &o, &err), HSCOPE_OK);
        a->tally_rows = hscope_tally_row_count(t);
        a->tally_first_count = hscope_tally_row_count_of(t, 0);
        hscope_tally_free(t);
    }
    if (which == 1 || which < 0) {
        for (hscope_id i = 0; i < n; i++) {
            const hscope_id *s;
            uint64_t k;
            assert_int_equal(hscope_heap_object_referrers(heap, i, &s, &k, &err), HSCOPE_OK);
            a->referrers_sum += k;
        }
    }
    if (which == 2 || which < 0) {
        hscope_domtree_t *t = NULL;
        assert_int_equal(hscope_domtree_compute(&t, heap, NULL, &err), HSCOPE_OK);
        hscope_id top;
        assert_int_equal(hscope_domtree_top(t, &top, 1), 1);
        a->retained_top = hscope_domtree_retained(t, top);
        hscope_domtree_totals(t, &a->reachable, NULL, NULL, NULL);
        const hscope_id *kids;
        uint64_t nk;
        assert_int_equal(hscope_domtree_children(t, HSCOPE_ID_NONE, -1, &kids, &nk, &err), HSCOPE_OK);
        /* holders of every 7th object */
        hscope_id *set = malloc((n / 7 + 1) * sizeof(hscope_id));
        uint64_t ns = 0;
        for (hscope_id i = 0; i < n; i += 7)
            set[ns++] = i;
        hscope_holders_t *h = NULL;
        assert_int_equal(hscope_holders_compute(&h, t, set, ns, &err), HSCOPE_OK);
        a->holders = hscope_holders_count(h);
        hscope_holders_free(h);
        free(set);
        hscope_domtree_free(t);
    }
    if (which == 3 || which < 0) {
        hscope_paths_t *p = NULL;
        assert_int_equal(hscope_paths_compute(&p, heap, NULL, &err), HSCOPE_OK);
        for (hscope_id i = 0; i < n; i += 13)
            a->path_len_sum += hscope_paths_get(p, i, NULL, 0, NULL);
        hscope_paths_free(p);
    }
    if (which == 4 || which < 0) {
        /* the same heap as all three snapshots: nothing is new */
        hscope_diff_t *d = NULL;
        assert_int_equal(hscope_diff_compute(&d, heap, heap, heap, NULL, &err), HSCOPE_OK);
        a->diff_count = hscope_diff_count(d);
        hscope_diff_free(d);
    }
    if (which == 5 || which < 0) {
        hscope_tally_t *t = NULL;
        assert_int_equal(hscope_tally_file(&t, dump_path, "class", NULL, NULL, &err), HSCOPE_OK);
        a->stream_rows = hscope_tally_row_count(t);
        /* the fold on the parallel parser (sink on the merging thread),
         * several of them at once: the same rows */
        hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
        lo.threads = 3;
        hscope_tally_t *t3 = NULL;
        assert_int_equal(hscope_tally_file(&t3, dump_path, "class", &lo, NULL, &err), HSCOPE_OK);
        assert_int_equal(hscope_tally_row_count(t3), a->stream_rows);
        for (uint64_t i = 0; i < a->stream_rows; i++) {
            assert_string_equal(hscope_tally_row_key(t3, i), hscope_tally_row_key(t, i));
            assert_int_equal(hscope_tally_row_count_of(t3, i), hscope_tally_row_count_of(t, i));
        }
        hscope_tally_free(t3);
        hscope_tally_free(t);
    }
}

typedef struct job {
    int which;
    answers got;
} job;

static void *
run(void *arg)
{
    job *j = arg;
    for (int r = 0; r < ROUNDS; r++)
        compute(&j->got, j->which);
    return NULL;
}

static void
test_concurrent_analyses(void **state)
{
    (void)state;
    answers want;
    /* the reference answers, computed on a fresh heap by one thread */
    compute(&want, -1);
    hscope_heap_free(heap);
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_open_file(&heap, dump_path, NULL, &err), HSCOPE_OK);

    pthread_t th[NTHREADS];
    job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        jobs[i].which = i % 6;
        assert_int_equal(pthread_create(&th[i], NULL, run, &jobs[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++) {
        const answers *g = &jobs[i].got;
        switch (jobs[i].which) {
        case 0:
            assert_int_equal(g->tally_rows, want.tally_rows);
            assert_int_equal(g->tally_first_count, want.tally_first_count);
            break;
        case 1: assert_int_equal(g->referrers_sum, want.referrers_sum); break;
        case 2:
            assert_int_equal(g->retained_top, want.retained_top);
            assert_int_equal(g->reachable, want.reachable);
            assert_int_equal(g->holders, want.holders);
            break;
        case 3: assert_int_equal(g->path_len_sum, want.path_len_sum); break;
        case 4: assert_int_equal(g->diff_count, 0); break;
        case 5: assert_int_equal(g->stream_rows, want.stream_rows); break;
        }
    }
    /* sanity: the answers are not trivially zero */
    assert_true(want.tally_rows > 10);
    assert_int_equal(want.referrers_sum, hscope_heap_reference_count(heap));
    assert_true(want.reachable > 0 && want.path_len_sum > 0);
}

/* The whole contents of a file (NUL-terminated), or NULL. */
static char *
slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, k;
    char *b = malloc(cap);
    while (b && (k = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    fclose(f);
    if (b)
        b[n] = 0;
    *len = n;
    return b;
}

/* Export dump `path` (n objects, nrefs references) on two threads and on
 * one, CSV and JSON lines: every table the same bytes, one line per
 * object and per reference. */
static void
compare_exports(const char *path, uint64_t n, uint64_t nrefs)
{
    static const char *const tables[] = { "dumps", "objects", "refs", "roots" };
    char base[] = "/tmp/hscope-export-XXXXXX";
    assert_non_null(mkdtemp(base));
    for (int32_t fmt = HSCOPE_FORMAT_CSV; fmt <= HSCOPE_FORMAT_JSONL; fmt += HSCOPE_FORMAT_JSONL) {
        const char *ext = fmt == HSCOPE_FORMAT_CSV ? "csv" : "jsonl";
        char dir[2][64];
        for (int k = 0; k < 2; k++) {
            snprintf(dir[k], sizeof(dir[k]), "%s/%s%d", base, ext, k);
            hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
            lo.threads = k ? 1 : 2;
            hscope_export_options eo = HSCOPE_EXPORT_OPTIONS_INIT;
            eo.format = fmt;
            hscope_error err = HSCOPE_ERROR_INIT;
            hscope_export_t *ex = NULL;
            assert_int_equal(hscope_export_files(&ex, &path, 1, dir[k], &lo, &eo, &err),
                             HSCOPE_OK);
            hscope_export_free(ex);
        }
        for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
            char p[2][192];
            size_t len[2];
            char *text[2];
            for (int k = 0; k < 2; k++) {
                snprintf(p[k], sizeof(p[k]), "%s/%s.%s", dir[k], tables[t], ext);
                text[k] = slurp(p[k], &len[k]);
                assert_non_null(text[k]);
            }
            assert_true(len[0] > 0);
            assert_int_equal(len[0], len[1]);
            assert_memory_equal(text[0], text[1], len[0]);
            /* one line per object and per reference, as the heap says */
            uint64_t lines = 0;
            for (size_t i = 0; i < len[0]; i++)
                lines += text[0][i] == '\n';
            uint64_t head = fmt == HSCOPE_FORMAT_CSV;
            if (t == 1)
                assert_int_equal(lines, n + head);
            if (t == 2)
                assert_int_equal(lines, nrefs + head);
            for (int k = 0; k < 2; k++) {
                free(text[k]);
                unlink(p[k]);
            }
        }
        for (int k = 0; k < 2; k++) {
            char p[192];
            snprintf(p, sizeof(p), "%s/schema.sql", dir[k]);
            unlink(p);
            snprintf(p, sizeof(p), "%s/schema.duckdb.sql", dir[k]);
            unlink(p);
            rmdir(dir[k]);
        }
    }
    rmdir(base);
}

/* hscope_export_files writes a dump's objects and references tables on
 * two threads (unless the load options say one): the same bytes as on
 * one thread, CSV and JSON lines. */
static void
test_export_two_tables(void **state)
{
    (void)state;
    if (hscope_heap_object_count(heap) < 4096) /* export's bar for a second thread */
        print_message("%s: under 4096 objects, exported on one thread either way\n", dump_path);
    compare_exports(dump_path, hscope_heap_object_count(heap), hscope_heap_reference_count(heap));
}

/* The two threads share the tables in chunks of 8,192 objects written in
 * order: a dump of many chunks, whose references vary per object, and one
 * chunk whose rows (64 objects with a 40 KB file name) overflow the
 * 2 MiB chunk buffer. */
static void
test_export_chunks(void **state)
{
    (void)state;
    char path[] = "/tmp/hscope-chunks-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    enum { N = 60000, LONG0 = 3 * 8192 + 100, NLONG = 64, LONGLEN = 40000 };
    char *longname = malloc(LONGLEN + 1);
    assert_non_null(longname);
    for (int i = 0; i < LONGLEN; i++)
        longname[i] = (char)('a' + i % 26);
    longname[LONGLEN] = '\0';
    fputs("{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x100000\"]}\n"
          "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n", f);
    uint64_t nrefs = 0;
    for (int i = 0; i < N; i++) {
        fprintf(f, "{\"address\":\"0x%x\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":%d,"
                   "\"bytesize\":%d",
                0x100000 + 0x28 * i, 40 + i % 97, i % 13);
        int nr = i % 5 == 0 ? i % 4 : 0;
        if (i && nr) {
            fputs(",\"references\":[", f);
            for (int r = 0; r < nr; r++)
                fprintf(f, "%s\"0x%x\"", r ? "," : "", 0x100000 + 0x28 * ((i * 7 + r) % i));
            fputs("]", f);
            nrefs += (uint64_t)nr;
        }
        if (i >= LONG0 && i < LONG0 + NLONG)
            fprintf(f, ",\"file\":\"/app/%s.rb\",\"line\":%d", longname, i);
        else if (i % 3)
            fprintf(f, ",\"file\":\"/app/f%d.rb\",\"line\":%d", i % 17, i % 101);
        fputs("}\n", f);
    }
    assert_int_equal(fclose(f), 0);
    free(longname);
    compare_exports(path, N + 1, nrefs);
    unlink(path);
}

static int
setup(void **state)
{
    (void)state;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_heap_open_file(&heap, dump_path, NULL, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: %s\n", dump_path, err.message);
        return -1;
    }
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    hscope_heap_free(heap);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--skip-missing") != 0)) {
        fprintf(stderr, "usage: %s DUMP [--skip-missing]\n", argv[0]);
        return 2;
    }
    dump_path = argv[1];
    if (argc == 3 && access(dump_path, R_OK) != 0) {
        printf("SKIP: %s not found (no shared corpus): not checked: concurrent analyses "
               "on this Ruby 3.0 dump (test threads runs them on our workload's)\n", dump_path);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_analyses),
        cmocka_unit_test(test_export_two_tables),
        cmocka_unit_test(test_export_chunks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
