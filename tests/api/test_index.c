/*
 * test_index.c - saved indexes: a heap saved with hscope_heap_save() and
 * opened with hscope_heap_open_saved() answers exactly like the parsed
 * heap; a changed source makes it stale; and corrupting any byte of the
 * index file is detected (or lands in padding and changes nothing) —
 * never a crash or a wrong answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

static char dump[256], ix[300];

static const char text[] =
    "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\", \"0x100\", \"0xdead\"]}\n"
    "{\"address\":\"0x10\", \"type\":\"CLASS\", \"name\":\"Foo\", \"references\":[\"0x100\"], \"memsize\":500}\n"
    "{\"address\":\"0x20\", \"type\":\"CLASS\", \"real_class_name\":\"Object\", \"memsize\":400}\n"
    "{\"address\":\"0x100\", \"type\":\"OBJECT\", \"class\":\"0x10\", \"references\":[\"0x200\", \"0x300\", \"0xbeef\"], "
    "\"file\":\"app.rb\", \"line\":3, \"method\":\"new\", \"generation\":7, \"memsize\":40}\n"
    "{\"address\":\"0x200\", \"type\":\"STRING\", \"class\":\"0x20\", \"bytesize\":5000000000, \"value\":\"hi\", "
    "\"memsize\":5000000000, \"flags\":{\"old\":true}}\n"
    "{\"address\":\"0x300\", \"type\":\"IMEMO\", \"imemo_type\":\"ment\", \"memsize\":40}\n"
    "{\"address\":\"0x400\", \"type\":\"WEIRD\", \"class\":\"0x999\", \"memsize\":8}\n"
    "not json\n";

/* A digest of everything an accessor can tell about a heap. */
static void
digest(hscope_heap_t *h, char *out, size_t n)
{
    size_t o = 0;
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    hscope_heap_stats(h, &s);
    o += (size_t)snprintf(out + o, n - o, "n=%llu e=%llu d=%llu sk=%llu|",
                          (unsigned long long)s.objects, (unsigned long long)s.references,
                          (unsigned long long)hscope_heap_dangling_count(h),
                          (unsigned long long)s.skipped_lines);
    for (hscope_id i = 0; i < hscope_heap_object_count(h); i++) {
        const hscope_id *r;
        uint64_t nr;
        hscope_heap_object_references(h, i, &r, &nr);
        const char *f = hscope_heap_object_file(h, i), *v = NULL;
        uint64_t vl = 0;
        hscope_heap_object_value(h, i, &v, &vl);
        o += (size_t)snprintf(out + o, n - o, "%llx %s %s %llu %llu %lld %s:%u %s %llu %u|",
            (unsigned long long)hscope_heap_object_address(h, i),
            hscope_heap_type_name(h, hscope_heap_object_type(h, i)),
            hscope_heap_object_class_label(h, i),
            (unsigned long long)hscope_heap_object_memsize(h, i),
            (unsigned long long)hscope_heap_object_size(h, i),
            (long long)hscope_heap_object_generation(h, i), f ? f : "-",
            hscope_heap_object_line(h, i), v ? v : "-", (unsigned long long)nr,
            hscope_heap_object_flags(h, i));
        hscope_id id;
        assert_int_equal(hscope_heap_find(h, hscope_heap_object_address(h, i), &id), HSCOPE_OK);
        assert_int_equal(id, i);
    }
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_tally_compute(&t, h, "file:line:class", NULL, &err), HSCOPE_OK);
    for (uint64_t r = 0; r < hscope_tally_row_count(t); r++)
        o += (size_t)snprintf(out + o, n - o, "%s=%llu ", hscope_tally_row_key(t, r),
                              (unsigned long long)hscope_tally_row_count_of(t, r));
    hscope_tally_free(t);
    hscope_domtree_t *d = NULL;
    assert_int_equal(hscope_domtree_compute(&d, h, NULL, &err), HSCOPE_OK);
    for (hscope_id i = 0; i < hscope_heap_object_count(h); i++)
        o += (size_t)snprintf(out + o, n - o, "r%llu ",
                              (unsigned long long)hscope_domtree_retained(d, i));
    hscope_domtree_free(d);
}

static hscope_heap_t *
parse(void)
{
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.flags = HSCOPE_LOAD_VALUES;
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_open_file(&h, dump, &lo, &err), HSCOPE_OK);
    return h;
}

static int
setup(void **state)
{
    (void)state;
    snprintf(dump, sizeof(dump), "/tmp/hscope-ix-%d.json", (int)getpid());
    snprintf(ix, sizeof(ix), "%s.hsx", dump);
    FILE *f = fopen(dump, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fclose(f);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    unlink(dump);
    unlink(ix);
    return 0;
}

static void
test_round_trip(void **state)
{
    (void)state;
    hscope_heap_t *h = parse();
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_save(h, ix, dump, &err), HSCOPE_OK);
    static char a[16384], b[16384];
    digest(h, a, sizeof(a));
    hscope_heap_t *g = NULL;
    assert_int_equal(hscope_heap_open_saved(&g, ix, dump, NULL, &err), HSCOPE_OK);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    hscope_heap_stats(g, &s);
    assert_int_equal(s.from_index, 1);
    digest(g, b, sizeof(b));
    assert_string_equal(a, b);
    /* the flag on hscope_heap_open_file picks the index up by itself */
    hscope_heap_t *k = NULL;
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.flags = HSCOPE_LOAD_USE_INDEX;
    assert_int_equal(hscope_heap_open_file(&k, dump, &lo, &err), HSCOPE_OK);
    hscope_heap_stats(k, &s);
    assert_int_equal(s.from_index, 1);
    hscope_heap_free(k);
    hscope_heap_free(g);
    hscope_heap_free(h);
}

static void
test_stale(void **state)
{
    (void)state;
    hscope_heap_t *h = parse(), *g = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_save(h, ix, dump, &err), HSCOPE_OK);
    /* same bytes, new mtime: stale */
    struct timeval tv[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
    assert_int_equal(utimes(dump, tv), 0);
    assert_int_equal(hscope_heap_open_saved(&g, ix, dump, NULL, &err), HSCOPE_ERR_STALE);
    assert_null(g);
    assert_true(strstr(err.message, "another version") != NULL);
    /* without a source to compare with, it still opens */
    assert_int_equal(hscope_heap_open_saved(&g, ix, NULL, NULL, &err), HSCOPE_OK);
    hscope_heap_free(g);
    /* USE_INDEX falls back to parsing a changed dump */
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.flags = HSCOPE_LOAD_USE_INDEX;
    assert_int_equal(hscope_heap_open_file(&g, dump, &lo, &err), HSCOPE_OK);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    hscope_heap_stats(g, &s);
    assert_int_equal(s.from_index, 0);
    hscope_heap_free(g);
    hscope_heap_free(h);
    /* not an index at all */
    assert_int_equal(hscope_heap_open_saved(&g, dump, NULL, NULL, &err), HSCOPE_ERR_CORRUPT);
}

static void
test_every_byte_flipped(void **state)
{
    (void)state;
    hscope_heap_t *h = parse();
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_save(h, ix, NULL, &err), HSCOPE_OK);
    static char want[16384], got[16384];
    digest(h, want, sizeof(want));
    hscope_heap_free(h);
    FILE *f = fopen(ix, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *orig = malloc((size_t)size);
    assert_int_equal(fread(orig, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    char bad[320];
    snprintf(bad, sizeof(bad), "%s.bad", ix);
    long detected = 0, harmless = 0;
    /* one copy, each byte flipped in place and put back: rewriting the
     * whole file per byte made this test wait on the disk for minutes */
    f = fopen(bad, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(orig, 1, (size_t)size, f), (size_t)size);
    assert_int_equal(fclose(f), 0);
    int fd = open(bad, O_WRONLY);
    assert_true(fd >= 0);
    for (long pos = 0; pos < size; pos++) {
        unsigned char flipped = orig[pos] ^ (unsigned char)(1u << (pos % 8));
        assert_int_equal(pwrite(fd, &flipped, 1, (off_t)pos), 1);
        hscope_heap_t *g = NULL;
        hscope_status st = hscope_heap_open_saved(&g, bad, NULL, NULL, &err);
        if (st == HSCOPE_OK) {
            digest(g, got, sizeof(got));
            assert_string_equal(got, want); /* a flip in padding: harmless */
            hscope_heap_free(g);
            harmless++;
        } else {
            assert_true(st == HSCOPE_ERR_CORRUPT || st == HSCOPE_ERR_STALE);
            assert_null(g);
            detected++;
        }
        assert_int_equal(pwrite(fd, &orig[pos], 1, (off_t)pos), 1);
    }
    close(fd);
    print_message("%ld bytes flipped one at a time: %ld detected, %ld harmless\n",
                  size, detected, harmless);
    assert_true(detected > 0);
    /* truncated files */
    for (long cut = 0; cut < size; cut += size / 50 + 1) {
        f = fopen(bad, "wb");
        fwrite(orig, 1, (size_t)cut, f);
        fclose(f);
        hscope_heap_t *g = NULL;
        assert_int_not_equal(hscope_heap_open_saved(&g, bad, NULL, NULL, &err), HSCOPE_OK);
        assert_null(g);
    }
    unlink(bad);
    free(orig);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_stale),
        cmocka_unit_test(test_every_byte_flipped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
