/*
 * test_waste.c - the waste analysis through the public API only.
 *
 * tests/data/waste-small.jsonl is a hand-made dump; the answers below are
 * worked out by hand from its records (see each table), not taken from
 * the program.  Also: the loaded-heap variant and its documented
 * difference, options and their checks, the writers' privacy, the second
 * read of a first copy too big for the ring (plain and gzip, and a dump
 * that changes between the two reads), failure injection and bad input.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

#include "api_sink.h"

static char fixture[4096];

static int
setup(void **state)
{
    (void)state;
    const char *dir = getenv("HEAPSCOPE_TEST_DATA");
    snprintf(fixture, sizeof(fixture), "%s/waste-small.jsonl", dir ? dir : "tests/data");
    return access(fixture, R_OK) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* The hand-computed answers for waste-small.jsonl                      */
/* ------------------------------------------------------------------ */

/*
 * Objects: 27 besides the dumper's empty Array (objspace.rb, dump_all),
 * memsize 600 (CLASS) + 120 + 223 + 240 + 200 + 1382 + 920 + 1968 + 592
 * + 40 = 6285.
 *
 * "hello" (5 B): a.rb:1 x2, b.rb:2 x1 (frozen), all 40 B: the largest
 *   copy is kept where most copies are (a.rb:1): a.rb:1 saves 40, b.rb:2
 *   saves 40.
 * "abcdefghij" x3 (30 B): c.rb:3 71 + 81 (capacity 40: only 1.3 times
 *   the content, not oversized), d.rb:4 71: the 81 one is kept: c.rb:3
 *   saves 71, d.rb:4 saves 71.
 * "unique" once: nothing.  Not compared: 1 shared, 1 without a value, 1
 * whose value (3 B) is not its bytesize (10).
 * Empty: f.rb:7 STRING x2 (80), g.rb:8 ARRAY x3 (120), g.rb:9 HASH (40),
 *   untraced ARRAY (40).
 * Oversized (ratio 4, min slack 256): h.rb:10 STRING capacity 1000 for 10
 *   (saves 990); h.rb:11 capacity 300 for 100 is only 3 times: no;
 *   i.rb:11 ARRAY 840 - 40 = 800 for 2 x 8 (saves 784); i.rb:20 embedded
 *   and i.rb:21 shared: no; j.rb:12 HASH 1040 - 40 = 1000 for 1 x 64
 *   (saves 936); j.rb:22 HASH 928 - 40 for 9 x 64 (1.5 times): no;
 *   k.rb:13 ARRAY slot_size 80: 592 - 80 = 512 for 8 (saves 504).
 * Total 222 + 280 + 3214 = 3716.
 */
typedef struct want_row {
    const char *key;
    int kind, type;
    uint64_t count, saving, memsize, copies, frozen, values, buffer, used;
} want_row;

#define D HSCOPE_WASTE_DUPLICATE
#define E HSCOPE_WASTE_EMPTY
#define O HSCOPE_WASTE_OVERSIZED
#define S HSCOPE_TYPE_STRING
#define A HSCOPE_TYPE_ARRAY
#define H HSCOPE_TYPE_HASH

/* biggest saving first; ties by key text ("(none)" < "a..."), then kind */
static const want_row file_rows[] = {
    { "h.rb:10", O, S, 1, 990, 1041, 0, 0, 0, 1000, 10 },
    { "j.rb:12", O, H, 1, 936, 1040, 0, 0, 0, 1000, 64 },
    { "i.rb:11", O, A, 1, 784, 840, 0, 0, 0, 800, 16 },
    { "k.rb:13", O, A, 1, 504, 592, 0, 0, 0, 512, 8 },
    { "g.rb:8", E, A, 3, 120, 120, 0, 0, 0, 0, 0 },
    { "f.rb:7", E, S, 2, 80, 80, 0, 0, 0, 0, 0 },
    { "c.rb:3", D, S, 1, 71, 152, 2, 0, 1, 0, 0 },
    { "d.rb:4", D, S, 1, 71, 71, 1, 0, 1, 0, 0 },
    { "(none):0", E, A, 1, 40, 40, 0, 0, 0, 0, 0 },
    { "a.rb:1", D, S, 1, 40, 80, 2, 0, 1, 0, 0 },
    { "b.rb:2", D, S, 1, 40, 40, 1, 1, 1, 0, 0 },
    { "g.rb:9", E, H, 1, 40, 40, 0, 0, 0, 0, 0 },
};

/* A loaded heap keeps no slot_size: k.rb:13's buffer is taken as
 * 592 - 40 = 552 (saves 544), as the header says. */
static const want_row heap_rows[] = {
    { "h.rb:10", O, S, 1, 990, 1041, 0, 0, 0, 1000, 10 },
    { "j.rb:12", O, H, 1, 936, 1040, 0, 0, 0, 1000, 64 },
    { "i.rb:11", O, A, 1, 784, 840, 0, 0, 0, 800, 16 },
    { "k.rb:13", O, A, 1, 544, 592, 0, 0, 0, 552, 8 },
    { "g.rb:8", E, A, 3, 120, 120, 0, 0, 0, 0, 0 },
    { "f.rb:7", E, S, 2, 80, 80, 0, 0, 0, 0, 0 },
    { "c.rb:3", D, S, 1, 71, 152, 2, 0, 1, 0, 0 },
    { "d.rb:4", D, S, 1, 71, 71, 1, 0, 1, 0, 0 },
    { "(none):0", E, A, 1, 40, 40, 0, 0, 0, 0, 0 },
    { "a.rb:1", D, S, 1, 40, 80, 2, 0, 1, 0, 0 },
    { "b.rb:2", D, S, 1, 40, 40, 1, 1, 1, 0, 0 },
    { "g.rb:9", E, H, 1, 40, 40, 0, 0, 0, 0, 0 },
};

static void
check_rows(const hscope_waste_t *w, const want_row *want, size_t n)
{
    assert_int_equal(hscope_waste_row_count(w), n);
    for (size_t i = 0; i < n; i++) {
        hscope_waste_row r = { .size = sizeof(r) };
        assert_int_equal(hscope_waste_row_get(w, i, &r), HSCOPE_OK);
        assert_string_equal(r.key, want[i].key);
        assert_int_equal(r.kind, want[i].kind);
        assert_int_equal(r.type, want[i].type);
        assert_int_equal(r.count, want[i].count);
        assert_int_equal(r.saving, want[i].saving);
        assert_int_equal(r.memsize, want[i].memsize);
        assert_int_equal(r.copies, want[i].copies);
        assert_int_equal(r.frozen, want[i].frozen);
        assert_int_equal(r.values, want[i].values);
        assert_int_equal(r.buffer, want[i].buffer);
        assert_int_equal(r.used, want[i].used);
        assert_non_null(r.fix);
        assert_true(strlen(r.fix) > 20);
    }
    hscope_waste_row r = { .size = sizeof(r) };
    assert_int_equal(hscope_waste_row_get(w, n, &r), HSCOPE_ERR_NOT_FOUND);
}

static void
check_totals(const hscope_waste_t *w, uint64_t saving, uint64_t oversized)
{
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    assert_int_equal(hscope_waste_totals_get(w, &t), HSCOPE_OK);
    assert_int_equal(t.objects, 27);
    assert_int_equal(t.memsize, 6285);
    assert_int_equal(t.saving, saving);
    assert_int_equal(t.count, 4 + 7 + 4);
    assert_int_equal(t.duplicate_count, 4);
    assert_int_equal(t.duplicate_saving, 222);
    assert_int_equal(t.duplicate_values, 2);
    assert_int_equal(t.duplicate_copies, 6);
    assert_int_equal(t.empty_count, 7);
    assert_int_equal(t.empty_saving, 280);
    assert_int_equal(t.oversized_count, 4);
    assert_int_equal(t.oversized_saving, oversized);
    assert_int_equal(t.shared_count, 1);
    assert_int_equal(t.shared_memsize, 40);
    assert_int_equal(t.no_value_count, 1);
    assert_int_equal(t.truncated_count, 1);
    assert_int_equal(t.collision_count, 0);
    assert_int_equal(t.excluded, 1);
    assert_int_equal(t.untraced, 1);
    assert_int_equal(t.group_count, 12);
    assert_int_equal(t.warnings, 0);
}

/* The values: "abc..." (saves 142) before "hello" (80), with their sites. */
static void
check_values(const hscope_waste_t *w)
{
    assert_int_equal(hscope_waste_value_count(w), 2);
    hscope_waste_value v = { .size = sizeof(v) };
    assert_int_equal(hscope_waste_value_get(w, 0, &v), HSCOPE_OK);
    assert_int_equal(v.length, 30);
    assert_memory_equal(v.data, "abcdefghijabcdefghijabcdefghij", 30);
    assert_int_equal(v.hash, XXH3_64bits("abcdefghijabcdefghijabcdefghij", 30));
    assert_int_equal(v.copies, 3);
    assert_int_equal(v.memsize, 223);
    assert_int_equal(v.saving, 142);
    assert_int_equal(v.sites, 2);
    const char *key;
    uint64_t copies, saving;
    assert_int_equal(hscope_waste_value_site(w, 0, 0, &key, &copies, &saving), HSCOPE_OK);
    assert_string_equal(key, "c.rb:3");
    assert_int_equal(copies, 2);
    assert_int_equal(saving, 71);
    assert_int_equal(hscope_waste_value_site(w, 0, 1, &key, &copies, &saving), HSCOPE_OK);
    assert_string_equal(key, "d.rb:4");
    assert_int_equal(hscope_waste_value_site(w, 0, 2, &key, &copies, &saving),
                     HSCOPE_ERR_NOT_FOUND);
    assert_int_equal(hscope_waste_value_get(w, 1, &v), HSCOPE_OK);
    assert_int_equal(v.length, 5);
    assert_memory_equal(v.data, "hello", 5);
    assert_int_equal(v.copies, 3);
    assert_int_equal(v.saving, 80);
    assert_int_equal(v.frozen, 1);
    assert_int_equal(v.fstring, 0);
    assert_int_equal(hscope_waste_value_get(w, 2, &v), HSCOPE_ERR_NOT_FOUND);
    /* row c.rb:3 (index 6) holds the 30-byte value: 2 copies, saves 71 */
    uint64_t value;
    assert_int_equal(hscope_waste_row_value(w, 6, 0, &value, &copies, &saving), HSCOPE_OK);
    assert_int_equal(value, 0);
    assert_int_equal(copies, 2);
    assert_int_equal(saving, 71);
    assert_int_equal(hscope_waste_row_value(w, 6, 1, &value, &copies, &saving),
                     HSCOPE_ERR_NOT_FOUND);
    /* rows that are not duplicates have no values */
    assert_int_equal(hscope_waste_row_value(w, 0, 0, &value, NULL, NULL), HSCOPE_ERR_NOT_FOUND);
}

/*
 * The fix of each place follows what the dump says there.
 * waste-advice.jsonl (hand-made, Ruby 3.4 records: it has chilled
 * strings, so the dump marks literals), each value 40 B a copy, at one
 * site each:
 *   app/models/user.rb:12 "admin" x3, all chilled      -> literal
 *   app/views/row.rb:7    "row-1" x2, none chilled      -> intern (built)
 *   app/x.rb:3            "mix" x2, one chilled         -> intern_or_literal
 *   app/y.rb:4            "fz" x2, both frozen          -> intern
 *   .../gems/activesupport-7.1.3/...:20 x2, :21 empty Array -> gem
 *   /usr/lib/ruby/3.4.0/set.rb:30 x2                    -> stdlib
 *   <internal:kernel>:90 x2                             -> ruby
 *   no file x2                                          -> untraced
 * By gem, the application's four sites are one row "(app)": 9 copies, 4
 * chilled (3 + 1): some literals, some not -> intern_or_literal.
 * waste-small.jsonl has no chilled string (before Ruby 3.4): its
 * unfrozen duplicates cannot be told literal from built.
 */
typedef struct want_fix {
    const char *key;
    int kind, fix_kind;
    uint64_t copies, chilled;
    const char *has, *hasnt; /* in the fix, and not in it (NULL: no check) */
} want_fix;

#define GEMF "/home/u/.gem/ruby/3.4.0/gems/activesupport-7.1.3/lib/active_support/inflector.rb"

static const want_fix advice_site[] = {
    { "app/models/user.rb:12", D, HSCOPE_WASTE_FIX_LITERAL, 3, 3,
      "add # frozen_string_literal: true", "-str" },
    { "app/views/row.rb:7", D, HSCOPE_WASTE_FIX_INTERN, 2, 0, "-str (String#-@)",
      "at the top of the file" },
    { "app/x.rb:3", D, HSCOPE_WASTE_FIX_INTERN_OR_LITERAL, 2, 1, "1 of 2 copies", NULL },
    { "app/y.rb:4", D, HSCOPE_WASTE_FIX_INTERN, 2, 0, "frozen but not deduplicated",
      "frozen_string_literal" },
    { GEMF ":20", D, HSCOPE_WASTE_FIX_GEM, 2, 0, "gem activesupport's code (activesupport-7.1.3)",
      "frozen_string_literal" },
    { GEMF ":21", E, HSCOPE_WASTE_FIX_GEM, 0, 0, "report it upstream", "lazily" },
    { "/usr/lib/ruby/3.4.0/set.rb:30", D, HSCOPE_WASTE_FIX_STDLIB, 2, 0,
      "standard library", "frozen_string_literal" },
    { "<internal:kernel>:90", D, HSCOPE_WASTE_FIX_RUBY, 2, 0, "Ruby's own code (<internal:kernel>)",
      "frozen_string_literal" },
    { "(none):0", D, HSCOPE_WASTE_FIX_UNTRACED, 2, 0, "trace_object_allocations",
      "frozen_string_literal" },
};

static const want_fix advice_gem[] = {
    { "(app)", D, HSCOPE_WASTE_FIX_INTERN_OR_LITERAL, 9, 4, "4 of 9 copies", NULL },
    { "activesupport-7.1.3", D, HSCOPE_WASTE_FIX_GEM, 2, 0, "gem activesupport's code", NULL },
    { "activesupport-7.1.3", E, HSCOPE_WASTE_FIX_GEM, 0, 0, "gem activesupport's code", NULL },
    { "(stdlib)", D, HSCOPE_WASTE_FIX_STDLIB, 2, 0, "standard library", NULL },
    { "(ruby)", D, HSCOPE_WASTE_FIX_RUBY, 2, 0, "Ruby's own code", NULL },
    { "(none)", D, HSCOPE_WASTE_FIX_UNTRACED, 2, 0, "no allocation info", NULL },
};

static const want_fix small_site[] = {
    { "a.rb:1", D, HSCOPE_WASTE_FIX_INTERN_OR_LITERAL, 2, 0, "cannot tell a literal", NULL },
    { "b.rb:2", D, HSCOPE_WASTE_FIX_INTERN, 1, 0, "frozen but not deduplicated", NULL },
    { "(none):0", E, HSCOPE_WASTE_FIX_UNTRACED, 0, 0, "no allocation info", "lazily" },
    { "f.rb:7", E, HSCOPE_WASTE_FIX_LAZY, 0, 0, "-\"\"", "frozen_string_literal" },
    { "g.rb:9", E, HSCOPE_WASTE_FIX_LAZY, 0, 0, "@h ||= {}", NULL },
    { "h.rb:10", O, HSCOPE_WASTE_FIX_RESIZE, 0, 0, "capacity", NULL },
};

static void
check_fixes(const char *file, uint32_t by, const want_fix *want, size_t n, size_t rows)
{
    char path[4200];
    snprintf(path, sizeof(path), "%.*s/%s", (int)(strrchr(fixture, '/') - fixture), fixture,
             file);
    hscope_waste_options wo = HSCOPE_WASTE_OPTIONS_INIT;
    wo.by = by;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_waste_t *w = NULL;
    assert_int_equal(hscope_waste_file(&w, path, NULL, &wo, &err), HSCOPE_OK);
    assert_int_equal(hscope_waste_row_count(w), rows);
    for (size_t k = 0; k < n; k++) {
        int found = 0;
        for (uint64_t i = 0; i < rows; i++) {
            hscope_waste_row r = { .size = sizeof(r) };
            assert_int_equal(hscope_waste_row_get(w, i, &r), HSCOPE_OK);
            if (strcmp(r.key, want[k].key) != 0 || r.kind != want[k].kind)
                continue;
            found = 1;
            if (r.fix_kind != want[k].fix_kind)
                fail_msg("%s: fix_kind %d, want %d (%s)", r.key, r.fix_kind, want[k].fix_kind,
                         r.fix);
            assert_int_equal(r.copies, want[k].copies);
            assert_int_equal(r.chilled, want[k].chilled);
            if (!strstr(r.fix, want[k].has))
                fail_msg("%s: fix '%s' lacks '%s'", r.key, r.fix, want[k].has);
            if (want[k].hasnt && strstr(r.fix, want[k].hasnt))
                fail_msg("%s: fix '%s' has '%s'", r.key, r.fix, want[k].hasnt);
        }
        if (!found)
            fail_msg("no row %s", want[k].key);
    }
    /* an older caller's row (without fix_kind) gets no more than it asked */
    hscope_waste_row old;
    memset(&old, 0xee, sizeof(old));
    old.size = offsetof(hscope_waste_row, fix_kind);
    assert_int_equal(hscope_waste_row_get(w, 0, &old), HSCOPE_OK);
    assert_int_equal(old.fix_kind, (int32_t)0xeeeeeeee);
    hscope_waste_free(w);
}

static void
test_fixes(void **state)
{
    (void)state;
    check_fixes("waste-advice.jsonl", HSCOPE_WASTE_BY_SITE, advice_site,
                sizeof(advice_site) / sizeof(advice_site[0]), 9);
    check_fixes("waste-advice.jsonl", HSCOPE_WASTE_BY_GEM, advice_gem,
                sizeof(advice_gem) / sizeof(advice_gem[0]), 6);
    check_fixes("waste-small.jsonl", HSCOPE_WASTE_BY_SITE, small_site,
                sizeof(small_site) / sizeof(small_site[0]), 12);
    /* JSON: each name one meaning at every level.  app/models/user.rb:12:
     * "admin" x3 of 40 B, all chilled: 2 go (count), saving 80 (memsize,
     * saving), its 3 copies are the finding's objects (120 B); its value
     * there: 3 copies, saving 80.  The empty Array at :21: 1 object, 40 B. */
    char path[4200];
    snprintf(path, sizeof(path), "%.*s/waste-advice.jsonl",
             (int)(strrchr(fixture, '/') - fixture), fixture);
    hscope_waste_t *w = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_waste_file(&w, path, NULL, NULL, &err), HSCOPE_OK);
    sink o = { 0 };
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_JSON;
    ro.top = HSCOPE_TOP_ALL;
    assert_int_equal(hscope_waste_write(w, &ro, collect, &o, &err), HSCOPE_OK);
    assert_non_null(strstr(o.p, "{\"key\":\"app/models/user.rb:12\",\"finding\":\"duplicate\","
                                "\"type\":\"STRING\",\"count\":2,\"memsize\":80,\"saving\":80,"
                                "\"objects\":3,\"objects_memsize\":120,\"copies\":3,"
                                "\"frozen\":0,\"fstring\":0,\"chilled\":3,\"value_count\":1,"));
    assert_non_null(strstr(o.p, "\"count\":3,\"memsize\":80,\"copies\":3,\"saving\":80}],"
                                "\"fix\":\"the copies are string literals"));
    assert_non_null(strstr(o.p, "\"fix_kind\":\"literal\"}"));
    assert_non_null(strstr(o.p, "inflector.rb:21\",\"finding\":\"empty\",\"type\":\"ARRAY\","
                                "\"count\":1,\"memsize\":40,\"saving\":40,\"objects\":1,"
                                "\"objects_memsize\":40,\"fix\":\"gem activesupport's code"));
    assert_non_null(strstr(o.p, "\"empty\":{\"count\":1,\"memsize\":40,\"saving\":40}"));
    free(o.p);
    hscope_waste_free(w);
}

static void
test_file(void **state)
{
    (void)state;
    for (uint32_t threads = 1; threads <= 3; threads++) {
        hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
        lo.threads = threads;
        hscope_error err = HSCOPE_ERROR_INIT;
        hscope_waste_t *w = NULL;
        assert_int_equal(hscope_waste_file(&w, fixture, &lo, NULL, &err), HSCOPE_OK);
        check_totals(w, 3716, 3214);
        check_rows(w, file_rows, sizeof(file_rows) / sizeof(file_rows[0]));
        check_values(w);
        hscope_load_stats st = HSCOPE_LOAD_STATS_INIT;
        assert_int_equal(hscope_waste_stats(w, &st), HSCOPE_OK);
        assert_int_equal(st.objects, 28);
        assert_int_equal(st.lines, 29);
        hscope_waste_free(w);
    }
}

static void
test_heap(void **state)
{
    (void)state;
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.flags = HSCOPE_LOAD_VALUES;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *h = NULL;
    hscope_waste_t *w = NULL;
    assert_int_equal(hscope_heap_open_file(&h, fixture, &lo, &err), HSCOPE_OK);
    assert_int_equal(hscope_waste_compute(&w, h, NULL, &err), HSCOPE_OK);
    check_totals(w, 3716 + 40, 3214 + 40);
    check_rows(w, heap_rows, sizeof(heap_rows) / sizeof(heap_rows[0]));
    check_values(w);
    hscope_waste_free(w);
    hscope_heap_free(h);

    /* without values: no duplicates, and a warning */
    assert_int_equal(hscope_heap_open_file(&h, fixture, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_waste_compute(&w, h, NULL, &err), HSCOPE_OK);
    hscope_heap_free(h); /* the result keeps no reference */
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    assert_int_equal(hscope_waste_totals_get(w, &t), HSCOPE_OK);
    assert_true(t.warnings & HSCOPE_WASTE_WARN_NO_VALUES);
    assert_int_equal(t.duplicate_values, 0);
    assert_int_equal(t.duplicate_count, 0);
    /* every string but the shared, empty and oversized ones */
    assert_int_equal(t.no_value_count, 10);
    assert_int_equal(t.empty_count, 7);
    assert_int_equal(hscope_waste_value_count(w), 0);
    hscope_waste_free(w);
}

static hscope_waste_t *
run(const hscope_waste_options *wo)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_waste_t *w = NULL;
    assert_int_equal(hscope_waste_file(&w, fixture, NULL, wo, &err), HSCOPE_OK);
    return w;
}

static void
find_row(const hscope_waste_t *w, const char *key, int kind, hscope_waste_row *r)
{
    for (uint64_t i = 0; i < hscope_waste_row_count(w); i++) {
        r->size = sizeof(*r);
        assert_int_equal(hscope_waste_row_get(w, i, r), HSCOPE_OK);
        if (strcmp(r->key, key) == 0 && r->kind == kind)
            return;
    }
    fail_msg("no row %s kind %d", key, kind);
}

static void
test_options(void **state)
{
    (void)state;
    hscope_waste_options wo = HSCOPE_WASTE_OPTIONS_INIT;
    hscope_waste_row r;
    /* ratio 2, min slack 100: h.rb:11 (300 for 100) is oversized now */
    wo.ratio = 2;
    wo.min_slack = 100;
    hscope_waste_t *w = run(&wo);
    find_row(w, "h.rb:11", O, &r);
    assert_int_equal(r.saving, 200);
    assert_int_equal(r.buffer, 300);
    assert_int_equal(r.used, 100);
    hscope_waste_free(w);
    /* by gem: every file is the application's, but the untraced one */
    hscope_waste_options_init(&wo);
    wo.by = HSCOPE_WASTE_BY_GEM;
    w = run(&wo);
    find_row(w, "(app)", D, &r);
    assert_int_equal(r.count, 4);
    assert_int_equal(r.saving, 222);
    assert_int_equal(r.copies, 6);
    assert_int_equal(r.values, 2);
    find_row(w, "(app)", E, &r);
    assert_int_equal(r.type, A);
    assert_int_equal(r.count, 3);
    find_row(w, "(none)", E, &r);
    assert_int_equal(r.count, 1);
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    hscope_waste_totals_get(w, &t);
    assert_int_equal(t.saving, 3716);
    const char *key;
    uint64_t copies, saving;
    assert_int_equal(hscope_waste_value_site(w, 0, 0, &key, &copies, &saving), HSCOPE_OK);
    assert_string_equal(key, "(app)");
    assert_int_equal(copies, 3);
    assert_int_equal(saving, 142);
    hscope_waste_free(w);
    /* the dumper's empty Array, kept */
    hscope_waste_options_init(&wo);
    wo.flags = HSCOPE_WASTE_KEEP_DUMPER;
    w = run(&wo);
    find_row(w, "/usr/lib/ruby/3.1.0/objspace.rb:87", E, &r);
    assert_int_equal(r.count, 1);
    hscope_waste_totals_get(w, &t);
    assert_int_equal(t.excluded, 0);
    assert_int_equal(t.objects, 28);
    hscope_waste_free(w);
    /* checks */
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_waste_options_init(&wo);
    wo.flags = 0x80;
    assert_int_equal(hscope_waste_file(&w, fixture, NULL, &wo, &err), HSCOPE_ERR_UNSUPPORTED);
    assert_null(w);
    hscope_waste_options_init(&wo);
    wo.by = 7;
    assert_int_equal(hscope_waste_file(&w, fixture, NULL, &wo, &err), HSCOPE_ERR_UNSUPPORTED);
    wo.by = 0;
    wo.size = 4;
    assert_int_equal(hscope_waste_file(&w, fixture, NULL, &wo, &err), HSCOPE_ERR_INVALID_ARG);
    /* an older caller's smaller struct works: fields beyond it are defaults */
    wo.size = offsetof(hscope_waste_options, ratio);
    wo.ratio = 2; /* not part of the caller's struct: ignored */
    assert_int_equal(hscope_waste_file(&w, fixture, NULL, &wo, &err), HSCOPE_OK);
    hscope_waste_totals_get(w, &t);
    assert_int_equal(t.oversized_saving, 3214);
    hscope_waste_free(w);
    /* a newer caller's bigger struct with a non-zero unknown field */
    struct {
        hscope_waste_options o;
        uint64_t extra;
    } big = { HSCOPE_WASTE_OPTIONS_INIT, 1 };
    big.o.size = sizeof(big);
    assert_int_equal(hscope_waste_file(&w, fixture, NULL, &big.o, &err), HSCOPE_ERR_UNSUPPORTED);
    big.extra = 0;
    assert_int_equal(hscope_waste_file(&w, fixture, NULL, &big.o, &err), HSCOPE_OK);
    hscope_waste_free(w);
}

/* ------------------------------------------------------------------ */
/* Writers                                                              */
/* ------------------------------------------------------------------ */

static char *
write_report(const hscope_waste_t *w, int32_t format, uint32_t flags)
{
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = format;
    ro.flags = flags;
    ro.top = HSCOPE_TOP_ALL;
    sink s = { 0 };
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_waste_write(w, &ro, collect, &s, &err), HSCOPE_OK);
    assert_non_null(s.p);
    return s.p;
}

static void
test_writers(void **state)
{
    (void)state;
    hscope_waste_t *w = run(NULL);
    char short_hash[16], long_hash[32];
    snprintf(short_hash, sizeof(short_hash), "#%08llx",
             (unsigned long long)(XXH3_64bits("hello", 5) >> 32));
    snprintf(long_hash, sizeof(long_hash), "\"hash\":\"%016llx\"",
             (unsigned long long)XXH3_64bits("hello", 5));
    char *text = write_report(w, HSCOPE_FORMAT_TEXT, 0);
    assert_non_null(strstr(text, short_hash));
    assert_null(strstr(text, "hello"));
    assert_null(strstr(text, "abcdefghij"));
    assert_non_null(strstr(text, "3.6 KB recoverable, 59.1% of 6.1 KB (27 objects)"));
    assert_non_null(strstr(text, "h.rb:10"));
    free(text);
    text = write_report(w, HSCOPE_FORMAT_TEXT, HSCOPE_REPORT_VALUES);
    assert_non_null(strstr(text, "\"hello\" (5 B)"));
    free(text);
    char *json = write_report(w, HSCOPE_FORMAT_JSON, 0);
    assert_non_null(strstr(json, "{\"kind\":\"waste\","));
    assert_non_null(strstr(json, long_hash));
    assert_non_null(strstr(json, "\"recoverable\":{\"count\":15,\"memsize\":3716,"));
    assert_non_null(strstr(json, "\"total\":{\"count\":27,\"memsize\":6285}"));
    assert_null(strstr(json, "\"value\""));
    assert_null(strstr(json, "hello"));
    free(json);
    json = write_report(w, HSCOPE_FORMAT_JSON, HSCOPE_REPORT_VALUES);
    assert_non_null(strstr(json, "\"value\":\"hello\""));
    free(json);
    /* no CSV writer; bad arguments */
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_CSV;
    sink s = { 0 };
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_waste_write(w, &ro, collect, &s, &err), HSCOPE_ERR_UNSUPPORTED);
    assert_int_equal(hscope_waste_write(NULL, NULL, collect, &s, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_waste_write(w, NULL, NULL, &s, &err), HSCOPE_ERR_INVALID_ARG);
    free(s.p);
    hscope_waste_free(w);
}

/* ------------------------------------------------------------------ */
/* First copies read back from the dump                                 */
/* ------------------------------------------------------------------ */

/* A value of 1.5 MB is too big for the ring of first copies: its first
 * copy is compared by reading its line again. */
#define BIG ((size_t)3 << 19)

static char tmpdir[256];

static void
write_big_dump(const char *path, char first_byte, int gz)
{
    char *v = malloc(BIG + 1);
    memset(v, 'q', BIG);
    v[BIG] = '\0';
    char head[256];
    size_t cap = 3 * BIG + 4096, len = 0;
    char *d = malloc(cap);
    const char *sites[] = { "x.rb\", \"line\":1", "y.rb\", \"line\":2", "x.rb\", \"line\":1" };
    for (int i = 0; i < 3; i++) {
        v[0] = i == 0 ? first_byte : 'q';
        int n = snprintf(head, sizeof(head),
                         "{\"address\":\"0x%x\", \"type\":\"STRING\", \"bytesize\":%zu, "
                         "\"value\":\"", 0x1000 + 40 * i, BIG);
        memcpy(d + len, head, (size_t)n);
        len += (size_t)n;
        memcpy(d + len, v, BIG);
        len += BIG;
        n = snprintf(head, sizeof(head), "\", \"file\":\"%s, \"memsize\":%zu}\n", sites[i],
                     BIG + 41);
        memcpy(d + len, head, (size_t)n);
        len += (size_t)n;
    }
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, d, (unsigned)len), (int)len);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(d, 1, len, f), len);
        fclose(f);
    }
    free(v);
    free(d);
}

static void
check_big(const hscope_waste_t *w, uint64_t copies)
{
    hscope_waste_value v = { .size = sizeof(v) };
    assert_int_equal(hscope_waste_value_count(w), 1);
    assert_int_equal(hscope_waste_value_get(w, 0, &v), HSCOPE_OK);
    assert_int_equal(v.length, BIG);
    assert_int_equal(v.copies, copies);
    assert_int_equal(v.saving, (copies - 1) * (BIG + 41));
    const char *key;
    uint64_t c;
    uint64_t saving;
    assert_int_equal(hscope_waste_value_site(w, 0, 0, &key, &c, &saving), HSCOPE_OK);
    if (copies == 3) { /* x.rb:1 x2 (one kept), y.rb:2 x1 */
        assert_string_equal(key, "x.rb:1");
        assert_int_equal(c, 2);
        assert_int_equal(saving, BIG + 41);
    } else { /* one each: the copy kept is at x.rb:1 (the first key) */
        assert_string_equal(key, "y.rb:2");
        assert_int_equal(c, 1);
        assert_int_equal(saving, BIG + 41);
    }
}

static void
test_read_back(void **state)
{
    (void)state;
    char path[512];
    for (int gz = 0; gz <= 1; gz++) {
        snprintf(path, sizeof(path), "%s/big%s", tmpdir, gz ? ".json.gz" : ".json");
        write_big_dump(path, 'q', gz);
        hscope_error err = HSCOPE_ERROR_INIT;
        hscope_waste_t *w = NULL;
        assert_int_equal(hscope_waste_file(&w, path, NULL, NULL, &err), HSCOPE_OK);
        check_big(w, 3);
        hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
        hscope_waste_totals_get(w, &t);
        assert_int_equal(t.warnings, 0);
        hscope_waste_free(w);
        /* a first copy that differs in its first byte: not a copy */
        write_big_dump(path, 'Q', gz);
        assert_int_equal(hscope_waste_file(&w, path, NULL, NULL, &err), HSCOPE_OK);
        check_big(w, 2);
        hscope_waste_free(w);
        unlink(path);
    }
}

/* The line hook rewrites the dump while it is read: the first copy's
 * value changes (same length) before it is read back. */
typedef struct rewrite {
    const char *path;
    int done;
} rewrite;

static int32_t
rewrite_first(void *ud, const char *line, uint64_t len, uint64_t lineno)
{
    rewrite *r = ud;
    (void)line;
    (void)len;
    if (lineno == 3 && !r->done) {
        FILE *f = fopen(r->path, "r+b");
        assert_non_null(f);
        /* the first record's value starts after its 70-odd byte head */
        assert_int_equal(fseek(f, 200, SEEK_SET), 0);
        fputc('Z', f);
        fclose(f);
        r->done = 1;
    }
    return 0;
}

static void
test_changed(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof(path), "%s/changing.json", tmpdir);
    write_big_dump(path, 'q', 0);
    rewrite r = { path, 0 };
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.line_fn = rewrite_first;
    lo.line_user_data = &r;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_waste_t *w = NULL;
    assert_int_equal(hscope_waste_file(&w, path, &lo, NULL, &err), HSCOPE_OK);
    assert_true(r.done);
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    hscope_waste_totals_get(w, &t);
    assert_true(t.warnings & HSCOPE_WASTE_WARN_CHANGED);
    check_big(w, 2); /* the changed first copy is not counted */
    hscope_waste_free(w);
    unlink(path);
}

/* ------------------------------------------------------------------ */
/* Failure injection                                                    */
/* ------------------------------------------------------------------ */

typedef struct chaos {
    long live, calls, fail_at;
} chaos;

static pthread_mutex_t ch_lock = PTHREAD_MUTEX_INITIALIZER;

static void *
ch_alloc(chaos *c, void *q, size_t n)
{
    pthread_mutex_lock(&ch_lock);
    void *p = NULL;
    if (++c->calls != c->fail_at) {
        p = realloc(q, n ? n : 1);
        if (p && !q)
            c->live++;
    }
    pthread_mutex_unlock(&ch_lock);
    return p;
}

static void *
ch_malloc(void *ud, size_t n)
{
    return ch_alloc(ud, NULL, n);
}

static void *
ch_realloc(void *ud, void *q, size_t n)
{
    return ch_alloc(ud, q, n);
}

static void
ch_free(void *ud, void *q)
{
    chaos *c = ud;
    if (!q)
        return;
    pthread_mutex_lock(&ch_lock);
    c->live--;
    free(q);
    pthread_mutex_unlock(&ch_lock);
}

static void
test_failures(void **state)
{
    (void)state;
    chaos c = { 0, 0, 0 };
    hscope_allocator al = { sizeof(al), 0, ch_malloc, ch_realloc, ch_free, &c };
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.allocator = &al;
    lo.threads = 2;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_waste_t *w = NULL;
    /* measure the calls of a whole run, then fail each one in turn */
    assert_int_equal(hscope_waste_file(&w, fixture, &lo, NULL, &err), HSCOPE_OK);
    hscope_waste_free(w);
    assert_int_equal(c.live, 0);
    long total = c.calls;
    assert_true(total > 20);
    int failed = 0;
    for (long k = 1; k <= total; k++) {
        c = (chaos){ 0, 0, k };
        w = NULL;
        hscope_status st = hscope_waste_file(&w, fixture, &lo, NULL, &err);
        if (st == HSCOPE_OK) {
            hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
            hscope_waste_totals_get(w, &t);
            assert_int_equal(t.saving, 3716);
            hscope_waste_free(w);
        } else {
            assert_int_equal(st, HSCOPE_ERR_NOMEM);
            assert_null(w);
            failed++;
        }
        assert_int_equal(c.live, 0);
    }
    assert_true(failed > 0);
}

static void
test_bad_input(void **state)
{
    (void)state;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_waste_t *w = (hscope_waste_t *)(uintptr_t)1;
    assert_int_equal(hscope_waste_file(NULL, fixture, NULL, NULL, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_waste_file(&w, NULL, NULL, NULL, &err), HSCOPE_ERR_INVALID_ARG);
    assert_null(w);
    assert_int_equal(hscope_waste_compute(&w, NULL, NULL, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_waste_file(&w, tmpdir, NULL, NULL, &err), HSCOPE_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "not a regular file"));
    char path[512];
    snprintf(path, sizeof(path), "%s/missing.json", tmpdir);
    assert_int_equal(hscope_waste_file(&w, path, NULL, NULL, &err), HSCOPE_ERR_IO);
    snprintf(path, sizeof(path), "%s/notadump.json", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("hello\nworld\n", f);
    fclose(f);
    assert_int_equal(hscope_waste_file(&w, path, NULL, NULL, &err), HSCOPE_ERR_NOT_A_DUMP);
    assert_null(w);
    unlink(path);
    /* accessors of nothing */
    hscope_waste_free(NULL);
    assert_int_equal(hscope_waste_row_count(NULL), 0);
    assert_int_equal(hscope_waste_value_count(NULL), 0);
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    assert_int_equal(hscope_waste_totals_get(NULL, &t), HSCOPE_ERR_INVALID_ARG);
    w = run(NULL);
    hscope_waste_row r = { .size = 4 };
    assert_int_equal(hscope_waste_row_get(w, 0, &r), HSCOPE_ERR_INVALID_ARG);
    /* an older caller's smaller row: only its fields are written */
    struct {
        hscope_waste_row r;
        uint64_t canary;
    } small = { .canary = 77 };
    small.r.size = offsetof(hscope_waste_row, saving);
    assert_int_equal(hscope_waste_row_get(w, 0, &small.r), HSCOPE_OK);
    assert_string_equal(small.r.key, "h.rb:10");
    assert_int_equal(small.r.count, 1);
    assert_int_equal(small.r.saving, 0);
    assert_int_equal(small.canary, 77);
    assert_int_equal(hscope_waste_skipped(w, HSCOPE_SKIP_BAD_JSON), 0);
    assert_int_equal(hscope_waste_skipped(w, -1), 0);
    hscope_waste_free(w);
}

/* Warnings: "warning: ..." lines first in text (none with
 * HSCOPE_REPORT_NO_WARNINGS), {"code", "message"} objects in JSON. */
static void
test_warnings(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof(path), "%s/damaged.json", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("{\"address\":\"0x10\",\"type\":\"STRING\",\"memsize\":40,\"bytesize\":2,"
          "\"value\":\"ab\"}\n"
          "{\"address\":\"0x38\",\"type\":\"STRING\",\"memsize\":40,\"bytesize\":2,"
          "\"value\":\"ab\"}\n"
          "not json\n",
          f);
    fclose(f);
    hscope_waste_t *w = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_waste_file(&w, path, NULL, NULL, &err), HSCOPE_OK);
    const char *names[] = { "d.json" };
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.dump_names = names;
    ro.dump_name_count = 1;
    sink s = { 0 };
    assert_int_equal(hscope_waste_write(w, &ro, collect, &s, &err), HSCOPE_OK);
    /* first, before the totals: the damage, no allocation sites */
    assert_ptr_equal(strstr(s.p, "warning: d.json: 1 of 3 lines skipped (bad_json 1)"), s.p);
    assert_non_null(strstr(s.p, "warning: no finding has an allocation site"));
    assert_true(strstr(s.p, "warning: no finding") < strstr(s.p, "Waste in d.json"));
    free(s.p);
    s = (sink){ NULL, 0 };
    ro.flags = HSCOPE_REPORT_NO_WARNINGS;
    assert_int_equal(hscope_waste_write(w, &ro, collect, &s, &err), HSCOPE_OK);
    assert_null(strstr(s.p, "warning:"));
    free(s.p);
    s = (sink){ NULL, 0 };
    ro.flags = 0;
    ro.format = HSCOPE_FORMAT_JSON;
    assert_int_equal(hscope_waste_write(w, &ro, collect, &s, &err), HSCOPE_OK);
    assert_non_null(strstr(s.p, "\"warnings\":[{\"code\":\"skipped_lines\",\"message\":"
                                "\"d.json: 1 of 3 lines skipped (bad_json 1)\"},"
                                "{\"code\":\"no_tracing\","));
    free(s.p);
    hscope_waste_free(w);
    unlink(path);
}

int
main(void)
{
    const char *base = getenv("HEAPSCOPE_WORK");
    snprintf(tmpdir, sizeof(tmpdir), "%s/waste-api-XXXXXX", base ? base : "/tmp");
    if (base) {
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", base);
        if (system(cmd) != 0)
            return 1;
    }
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file),      cmocka_unit_test(test_heap),
        cmocka_unit_test(test_options),   cmocka_unit_test(test_writers),
        cmocka_unit_test(test_read_back), cmocka_unit_test(test_changed),
        cmocka_unit_test(test_failures),  cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_warnings),  cmocka_unit_test(test_fixes),
    };
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    rmdir(tmpdir);
    return rc;
}
