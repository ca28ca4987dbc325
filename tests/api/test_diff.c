/*
 * test_diff.c - the 3- and 2-snapshot diff on hand-made dumps, one identity
 * rule per test, plus grouping, dumper exclusion, warnings and the
 * streamed (file) form agreeing with the in-memory form.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Leaked addresses of diff(a, b, c), sorted, as a comma-separated string. */
static void
leaked(const char *a, const char *b, const char *c, uint32_t flags, char *out,
       size_t n, uint64_t *excluded, uint32_t *warnings)
{
    hscope_heap_t *ha = load(a), *hb = load(b), *hc = c ? load(c) : NULL;
    hscope_diff_t *d = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_diff_options o = HSCOPE_DIFF_OPTIONS_INIT;
    o.flags = flags;
    assert_int_equal(hscope_diff_compute(&d, ha, hb, hc, &o, &err), HSCOPE_OK);
    hscope_heap_t *t = hscope_diff_heap(d);
    assert_ptr_equal(t, c ? hc : hb);
    out[0] = '\0';
    const hscope_id *ids = hscope_diff_objects(d);
    uint64_t mem = 0;
    for (uint64_t i = 0; i < hscope_diff_count(d); i++) {
        char one[32];
        snprintf(one, sizeof(one), "%s%llx", i ? "," : "",
                 (unsigned long long)hscope_heap_object_address(t, ids[i]));
        strncat(out, one, n - strlen(out) - 1);
        mem += hscope_heap_object_memsize(t, ids[i]);
    }
    assert_int_equal(mem, hscope_diff_memsize(d));
    if (excluded)
        *excluded = hscope_diff_excluded(d);
    if (warnings)
        *warnings = hscope_diff_warnings(d);
    /* the heaps may be freed before the diff: it holds its target */
    hscope_heap_free(ha);
    hscope_heap_free(hb);
    hscope_heap_free(hc);
    hscope_diff_free(d);
}

#define ROOT "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}\n"
#define CLS(a, n) "{\"address\":\"" a "\", \"type\":\"CLASS\", \"name\":\"" n "\", \"memsize\":100}\n"
#define STR(a, gen, line) "{\"address\":\"" a "\", \"type\":\"STRING\", \"class\":\"0x10\", " \
    "\"file\":\"app.rb\", \"line\":" #line ", \"generation\":" #gen ", \"memsize\":40}\n"
#define STRU(a) "{\"address\":\"" a "\", \"type\":\"STRING\", \"class\":\"0x10\", \"memsize\":40}\n"

static void
test_born_between_a_and_b_alive_in_c(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String") STR("0x100", 1, 5);
    const char *b = ROOT CLS("0x10", "String") STR("0x100", 1, 5) STR("0x200", 2, 6)
                    STR("0x300", 2, 7);
    const char *c = ROOT CLS("0x10", "String") STR("0x100", 1, 5) STR("0x200", 2, 6)
                    STR("0x400", 3, 8);
    char got[256];
    leaked(a, b, c, 0, got, sizeof(got), NULL, NULL);
    /* 0x100 is old, 0x300 died, 0x400 is too new: only 0x200 */
    assert_string_equal(got, "200");
}

static void
test_reused_address_new_generation_is_not_a_survivor(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String");
    const char *b = ROOT CLS("0x10", "String") STR("0x200", 2, 6);
    /* the B object died; a new one (generation 3) took its slot */
    const char *c = ROOT CLS("0x10", "String") STR("0x200", 3, 6);
    char got[256];
    leaked(a, b, c, 0, got, sizeof(got), NULL, NULL);
    assert_string_equal(got, "");
    /* the classic address-only diff is fooled, as documented */
    leaked(a, b, c, HSCOPE_DIFF_ADDRESS_ONLY, got, sizeof(got), NULL, NULL);
    assert_string_equal(got, "200");
}

static void
test_reused_address_from_a_is_still_new(void **state)
{
    (void)state;
    /* A had an object at 0x200 that died; B's object there is new */
    const char *a = ROOT CLS("0x10", "String") STR("0x200", 1, 5);
    const char *b = ROOT CLS("0x10", "String") STR("0x200", 2, 6);
    const char *c = ROOT CLS("0x10", "String") STR("0x200", 2, 6);
    char got[256];
    leaked(a, b, c, 0, got, sizeof(got), NULL, NULL);
    assert_string_equal(got, "200");
    leaked(a, b, c, HSCOPE_DIFF_ADDRESS_ONLY, got, sizeof(got), NULL, NULL);
    assert_string_equal(got, ""); /* address-only misses it */
}

static void
test_same_generation_other_site_is_another_object(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String");
    const char *b = ROOT CLS("0x10", "String") STR("0x200", 2, 6);
    const char *c = ROOT CLS("0x10", "String") STR("0x200", 2, 9); /* other line */
    char got[256];
    leaked(a, b, c, 0, got, sizeof(got), NULL, NULL);
    assert_string_equal(got, "");
}

static void
test_type_change_is_another_object(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String");
    const char *b = ROOT CLS("0x10", "String") STRU("0x200");
    const char *c = ROOT CLS("0x10", "String")
        "{\"address\":\"0x200\", \"type\":\"ARRAY\", \"class\":\"0x10\", \"memsize\":40}\n";
    char got[256];
    leaked(a, b, c, 0, got, sizeof(got), NULL, NULL);
    assert_string_equal(got, "");
}

static void
test_untraced_objects_match_on_type_and_class(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String") CLS("0x20", "Sym");
    const char *b = ROOT CLS("0x10", "String") CLS("0x20", "Sym") STRU("0x200") STRU("0x300");
    const char *c = ROOT CLS("0x10", "String") CLS("0x20", "Sym") STRU("0x200")
        "{\"address\":\"0x300\", \"type\":\"STRING\", \"class\":\"0x20\", \"memsize\":40}\n";
    char got[256];
    uint32_t warn = 0;
    leaked(a, b, c, 0, got, sizeof(got), NULL, &warn);
    assert_string_equal(got, "200"); /* 0x300 changed class: another object */
    assert_true(warn & HSCOPE_DIFF_WARN_NO_TRACING);
}

static void
test_traced_and_untraced_records_differ(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String");
    const char *b = ROOT CLS("0x10", "String") STRU("0x200");
    const char *c = ROOT CLS("0x10", "String") STR("0x200", 4, 6);
    char got[256];
    leaked(a, b, c, 0, got, sizeof(got), NULL, NULL);
    assert_string_equal(got, "");
}

static void
test_dumper_allocations_left_out(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String");
    const char *dumper = "{\"address\":\"0x500\", \"type\":\"STRING\", \"class\":\"0x10\", "
        "\"file\":\"/usr/lib/ruby/3.1.0/objspace.rb\", \"line\":87, \"method\":\"dump_all\", "
        "\"generation\":2, \"memsize\":40}\n";
    char b[1024], c[1024];
    snprintf(b, sizeof(b), "%s%s%s%s", ROOT, CLS("0x10", "String"), STR("0x200", 2, 6), dumper);
    snprintf(c, sizeof(c), "%s", b);
    char got[256];
    uint64_t excl = 0;
    leaked(a, b, c, 0, got, sizeof(got), &excl, NULL);
    assert_string_equal(got, "200");
    assert_int_equal(excl, 1);
    leaked(a, b, c, HSCOPE_DIFF_KEEP_DUMPER, got, sizeof(got), &excl, NULL);
    assert_string_equal(got, "200,500");
    assert_int_equal(excl, 0);
}

static void
test_two_snapshot_form(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String") STR("0x100", 1, 5);
    const char *b = ROOT CLS("0x10", "String") STR("0x100", 1, 5) STR("0x200", 2, 6);
    char got[256];
    leaked(a, b, NULL, 0, got, sizeof(got), NULL, NULL);
    assert_string_equal(got, "200");
}

static void
test_partial_dump_warning(void **state)
{
    (void)state;
    const char *a = CLS("0x10", "String") STR("0x100", 1, 5); /* no ROOT: since: */
    const char *b = ROOT CLS("0x10", "String") STR("0x200", 2, 6);
    char got[256];
    uint32_t warn = 0;
    leaked(a, b, b, 0, got, sizeof(got), NULL, &warn);
    assert_true(warn & HSCOPE_DIFF_WARN_PARTIAL);
    assert_false(warn & HSCOPE_DIFF_WARN_NO_TRACING);
}

static void
test_compaction_warning(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String");
    const char *b = ROOT CLS("0x10", "String")
        "{\"address\":\"0x200\", \"type\":\"STRING\", \"class\":\"0x10\", \"file\":\"x.rb\", "
        "\"line\":1, \"generation\":2, \"memsize\":40, \"flags\":{\"pinned\":true}}\n";
    char got[256];
    uint32_t warn = 0;
    leaked(a, b, b, 0, got, sizeof(got), NULL, &warn);
    assert_true(warn & HSCOPE_DIFF_WARN_COMPACTION);
}

/* grouping: rows list their members; counts add up */
static void
test_groups_and_members(void **state)
{
    (void)state;
    const char *a = ROOT CLS("0x10", "String") CLS("0x20", "Foo");
    const char *b = ROOT CLS("0x10", "String") CLS("0x20", "Foo") STR("0x200", 2, 6)
        STR("0x210", 2, 6) STR("0x220", 2, 7)
        "{\"address\":\"0x300\", \"type\":\"OBJECT\", \"class\":\"0x20\", \"file\":\"app.rb\", "
        "\"line\":9, \"generation\":2, \"memsize\":80}\n";
    hscope_heap_t *ha = load(a), *hb = load(b);
    hscope_diff_t *d = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_diff_compute(&d, ha, hb, hb, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_diff_count(d), 4);
    assert_int_equal(hscope_diff_memsize(d), 40 * 3 + 80);
    hscope_tally_t *t = NULL;
    hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
    assert_int_equal(hscope_diff_tally(&t, d, "file:line:class", &o, &err), HSCOPE_OK);
    assert_int_equal(hscope_tally_row_count(t), 3);
    assert_string_equal(hscope_tally_row_key(t, 0), "app.rb:6:String");
    assert_int_equal(hscope_tally_row_count_of(t, 0), 2);
    const hscope_id *ids;
    uint64_t n;
    assert_int_equal(hscope_tally_row_objects(t, 0, &ids, &n), HSCOPE_OK);
    assert_int_equal(n, 2);
    assert_int_equal(hscope_heap_object_address(hb, ids[0]), 0x200);
    assert_int_equal(hscope_heap_object_address(hb, ids[1]), 0x210);
    /* ties on count (1 each) are ordered by key */
    assert_string_equal(hscope_tally_row_key(t, 1), "app.rb:7:String");
    assert_string_equal(hscope_tally_row_key(t, 2), "app.rb:9:Foo");
    hscope_tally_free(t);
    assert_int_equal(hscope_diff_tally(&t, d, "type", &o, &err), HSCOPE_OK);
    assert_string_equal(hscope_tally_row_key(t, 0), "STRING");
    assert_int_equal(hscope_tally_row_count_of(t, 0), 3);
    hscope_tally_free(t);
    hscope_diff_free(d);
    hscope_heap_free(ha);
    hscope_heap_free(hb);
}

/* hscope_diff_files (streamed bases) equals hscope_diff_compute */
static void
test_files_equal_memory(void **state)
{
    (void)state;
    const char *text[3] = {
        ROOT CLS("0x10", "String") STR("0x100", 1, 5) STR("0x200", 1, 5),
        ROOT CLS("0x10", "String") STR("0x100", 1, 5) STR("0x200", 2, 5) STR("0x300", 2, 6),
        ROOT CLS("0x10", "String") STR("0x100", 1, 5) STR("0x200", 2, 5) STR("0x300", 2, 6)
            STR("0x400", 3, 6),
    };
    char path[3][64];
    for (int i = 0; i < 3; i++) {
        snprintf(path[i], sizeof(path[i]), "/tmp/hscope-diff-%d-%d.json", (int)getpid(), i);
        FILE *f = fopen(path[i], "w");
        assert_non_null(f);
        fputs(text[i], f);
        fclose(f);
    }
    hscope_diff_t *d = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_diff_files(&d, path[0], path[1], path[2], NULL, NULL, &err), HSCOPE_OK);
    char mem[256];
    leaked(text[0], text[1], text[2], 0, mem, sizeof(mem), NULL, NULL);
    assert_string_equal(mem, "200,300");
    assert_int_equal(hscope_diff_count(d), 2);
    hscope_heap_t *h = hscope_diff_heap(d);
    assert_int_equal(hscope_heap_object_address(h, hscope_diff_objects(d)[0]), 0x200);
    assert_int_equal(hscope_diff_snapshot_objects(d, 0), 3);
    assert_int_equal(hscope_diff_snapshot_objects(d, 1), 4);
    assert_int_equal(hscope_diff_snapshot_objects(d, 2), 5);
    assert_int_equal(hscope_diff_reused_addresses(d), 1); /* 0x200 in A, other identity */
    hscope_diff_free(d);
    /* a missing base file is a clean error */
    assert_int_equal(hscope_diff_files(&d, "/nonexistent/a.json", path[1], path[2], NULL, NULL, &err),
                     HSCOPE_ERR_IO);
    assert_null(d);
    for (int i = 0; i < 3; i++)
        unlink(path[i]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_born_between_a_and_b_alive_in_c),
        cmocka_unit_test(test_reused_address_new_generation_is_not_a_survivor),
        cmocka_unit_test(test_reused_address_from_a_is_still_new),
        cmocka_unit_test(test_same_generation_other_site_is_another_object),
        cmocka_unit_test(test_type_change_is_another_object),
        cmocka_unit_test(test_untraced_objects_match_on_type_and_class),
        cmocka_unit_test(test_traced_and_untraced_records_differ),
        cmocka_unit_test(test_dumper_allocations_left_out),
        cmocka_unit_test(test_two_snapshot_form),
        cmocka_unit_test(test_partial_dump_warning),
        cmocka_unit_test(test_compaction_warning),
        cmocka_unit_test(test_groups_and_members),
        cmocka_unit_test(test_files_equal_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
