/*
 * test_report.c - the writers of one dump's results and of a diff,
 * through the public header only: summary, tally, objects
 * (show), generations, dominators (text, JSON, folded), retained, retained
 * per group, paths (text, JSON, DOT), diff and suspects.  Every expected
 * byte or number is computed by hand from the small dumps below (the
 * comments show the arithmetic); options, the sink's errors and text
 * widths are checked too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>
#include <zlib.h>

#include "api_sink.h"

/*
 * The fixture.  Object ids in dump order: 0 0x2000 Class, 1 0x1000
 * PostsController (class Class), 2 0x4000 Hash, 3 0x3000 a Hash, 4 0x6000
 * String, 5 0x5000 and 6 0x5028 Strings, 7 0x7000 a String held by the
 * machine_context root.  8 objects, memsize 100+500+100+200+100+40+40+48
 * = 1128.  Class labels: the three root classes <hidden>, PostsController
 * Class, the Hash Hash, the Strings String.
 */
static const char fixture[] =
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x1000\"]}\n"
    "{\"type\":\"ROOT\",\"root\":\"machine_context\",\"references\":[\"0x7000\"]}\n"
    "{\"address\":\"0x2000\",\"type\":\"CLASS\",\"name\":\"Class\",\"memsize\":100}\n"
    "{\"address\":\"0x1000\",\"type\":\"CLASS\",\"class\":\"0x2000\",\"name\":\"PostsController\","
    "\"references\":[\"0x3000\"],\"memsize\":500,\"file\":\"app/controllers/posts_controller.rb\","
    "\"line\":3,\"generation\":1}\n"
    "{\"address\":\"0x4000\",\"type\":\"CLASS\",\"name\":\"Hash\",\"memsize\":100}\n"
    "{\"address\":\"0x3000\",\"type\":\"HASH\",\"class\":\"0x4000\",\"references\":[\"0x5000\","
    "\"0x5028\"],\"memsize\":200,\"size\":2,\"file\":\"app/controllers/posts_controller.rb\","
    "\"line\":9,\"generation\":2}\n"
    "{\"address\":\"0x6000\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n"
    "{\"address\":\"0x5000\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40,\"bytesize\":3,"
    "\"file\":\"app/models/post.rb\",\"line\":12,\"generation\":2,\"value\":\"abc\"}\n"
    "{\"address\":\"0x5028\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40,\"bytesize\":3,"
    "\"file\":\"app/models/post.rb\",\"line\":12,\"generation\":3,\"value\":\"xyz\"}\n"
    "{\"address\":\"0x7000\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":48,\"bytesize\":5}\n";

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static hscope_heap_t *
load_text(const char *text, uint32_t flags)
{
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.flags = flags;
    int st = hscope_heap_open_memory(&h, text, strlen(text), &lo, &err);
    if (st != HSCOPE_OK)
        fprintf(stderr, "load: %s\n", err.message);
    assert_int_equal(st, HSCOPE_OK);
    return h;
}

static hscope_report_options
ropts(int32_t format, uint32_t flags)
{
    hscope_report_options o = HSCOPE_REPORT_OPTIONS_INIT;
    o.format = format;
    o.flags = flags;
    return o;
}

/* `needle` must occur in the output (printed in full if not). */
#define assert_has(s, needle)                                                      \
    do {                                                                           \
        if (!strstr((s)->p ? (s)->p : "", (needle)))                               \
            fail_msg("missing:\n%s\n--- in:\n%s", (needle), (s)->p ? (s)->p : ""); \
    } while (0)
#define assert_lacks(s, needle)                                                    \
    do {                                                                           \
        if (strstr((s)->p ? (s)->p : "", (needle)))                                \
            fail_msg("unexpected:\n%s\n--- in:\n%s", (needle), (s)->p);            \
    } while (0)

/* Display columns of a line (UTF-8 continuation bytes take none). */
static size_t
columns(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static void
assert_lines_fit(const sink *s, size_t width)
{
    const char *p = s->p;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (columns(p, n) > width)
            fail_msg("line of %zu columns > %zu: %.*s", columns(p, n), width, (int)n, p);
        p += n + (nl != NULL);
    }
}

static hscope_domtree_t *
domtree(hscope_heap_t *h, uint32_t flags)
{
    hscope_domtree_t *t = NULL;
    hscope_dom_options o = HSCOPE_DOM_OPTIONS_INIT;
    o.flags = flags;
    assert_int_equal(hscope_domtree_compute(&t, h, &o, NULL), HSCOPE_OK);
    return t;
}

/* ------------------------------------------------------------------ */
/* summary                                                             */
/* ------------------------------------------------------------------ */

static void
test_summary(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    sink s = { 0 };
    const char *names[1] = { "f.json" };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    o.dump_names = names;
    o.dump_name_count = 1;
    assert_int_equal(hscope_heap_write_summary(h, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "{\"kind\":\"summary\",\"heapscope_version\":\"");
    assert_has(&s, "\"dumps\":[{\"path\":\"f.json\",\"objects\":8,\"gzip\":false,");
    assert_has(&s, "\"total\":{\"count\":8,\"memsize\":1128},\"references\":3,");
    assert_has(&s, "\"roots\":[{\"root\":\"vm\",\"records\":1,\"references\":1,\"unique\":1,"
                   "\"dangling\":0},{\"root\":\"machine_context\",\"records\":1,\"references\":1,"
                   "\"unique\":1,\"dangling\":0}]");
    assert_has(&s, "\"dangling\":{\"references\":0,\"addresses\":0}");
    /* types: CLASS 4 (100+500+100+100), STRING 3 (40+40+48), HASH 1 */
    assert_has(&s, "\"by_type\":{\"by\":\"type\",\"group_count\":3,\"groups\":["
                   "{\"key\":\"CLASS\",\"count\":4,\"memsize\":800},"
                   "{\"key\":\"STRING\",\"count\":3,\"memsize\":128},"
                   "{\"key\":\"HASH\",\"count\":1,\"memsize\":200}]}");
    /* classes: ties by key ('<' sorts before letters) */
    assert_has(&s, "\"by_class\":{\"by\":\"class\",\"group_count\":4,\"groups\":["
                   "{\"key\":\"<hidden>\",\"count\":3,\"memsize\":300},"
                   "{\"key\":\"String\",\"count\":3,\"memsize\":128},"
                   "{\"key\":\"Class\",\"count\":1,\"memsize\":500},"
                   "{\"key\":\"Hash\",\"count\":1,\"memsize\":200}]}");
    assert_has(&s, "\"warnings\":[]}\n");
    /* top 1: one class, all four counted */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o.top = 1;
    assert_int_equal(hscope_heap_write_summary(h, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"by_class\":{\"by\":\"class\",\"group_count\":4,\"groups\":["
                   "{\"key\":\"<hidden>\",\"count\":3,\"memsize\":300}]}");
    /* text: the head lines and a table of types */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(0, 0);
    assert_int_equal(hscope_heap_write_summary(h, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "  objects       8, memsize 1.1 KB\n"); /* 1128 / 1024 = 1.10 */
    /* no "dangling: 0 to 0 missing addresses" */
    assert_has(&s, "  references    3 (none dangling)\n");
    assert_has(&s, "  roots         vm 1, machine_context 1\n");
    /* 4/8 = 50.0%, 800/1128 = 70.9% */
    assert_has(&s, "by type        count      %    memsize      %\n"
                   "  CLASS            4  50.0%      800 B  70.9%\n");
    free(s.p);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* tally: JSON, widths and middle cuts in text, warnings               */
/* ------------------------------------------------------------------ */

static void
test_tally_text_width(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    hscope_tally_t *t = NULL;
    assert_int_equal(hscope_tally_compute(&t, h, "file:line:class", NULL, NULL), HSCOPE_OK);
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_TEXT, 0);
    o.width = 80;
    assert_int_equal(hscope_tally_write(t, &o, collect, &s, NULL), HSCOPE_OK);
    /*
     * Fixed columns: indent 2 + " count" 11 + " %" 7 + " memsize" 11 +
     * " %" 7 = 38, so the key column gets 80 - 38 = 42.  The 43-column key
     * keeps its file name, line and class whole (posts_controller.rb:3:Class,
     * 27) and cuts its directories (app/controllers/, 16) to the 14 columns
     * left around the marker: a third of them, 4, from the start, 10 from the
     * end.  count 1 of 8 = 12.5%, 500 of 1128 B = 44.3%.
     */
    assert_has(&s, "by file:line:class                                count      %    memsize      %\n");
    assert_has(&s, "  app/\xe2\x80\xa6ntrollers/posts_controller.rb:3:Class          1  12.5%"
                   "      500 B  44.3%\n");
    /* a short key is padded: the count column stays where it is */
    assert_has(&s, "  (none):0:<hidden>                                   3  37.5%      300 B  26.6%\n");
    assert_lines_fit(&s, 80);
    /* ASCII: "..." takes three columns: 12 left for the directories, 4 of
     * their start and 8 of their end */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o.flags = HSCOPE_REPORT_ASCII;
    assert_int_equal(hscope_tally_write(t, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "  app/...rollers/posts_controller.rb:3:Class          1  12.5%");
    assert_lines_fit(&s, 80);
    /* JSON */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_tally_write(t, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"dumps\":[{\"path\":null,\"objects\":8}],\"by\":\"file:line:class\","
                   "\"total\":{\"count\":8,\"memsize\":1128},\"group_count\":5,\"groups\":["
                   "{\"key\":\"(none):0:<hidden>\",\"count\":3,\"memsize\":300},"
                   "{\"key\":\"app/models/post.rb:12:String\",\"count\":2,\"memsize\":80},");
    assert_has(&s, "\"excluded_dumper_objects\":0,"
                   "\"excluded_tracer\":{\"count\":0,\"memsize\":0},\"warnings\":[]}\n");
    free(s.p);
    hscope_tally_free(t);
    hscope_heap_free(h);
}

static void
test_tally_warnings_and_dumper(void **state)
{
    (void)state;
    /* 4 lines: a ROOT, the dumper's String, a String, a line that is not
     * JSON; so 1 of 4 lines skipped, the dumper's object left out */
    static const char text[] =
        "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[]}\n"
        "{\"address\":\"0x10\",\"type\":\"STRING\",\"memsize\":40,\"file\":\"/r/objspace.rb\","
        "\"line\":1,\"method\":\"dump_all\",\"generation\":1}\n"
        "{\"address\":\"0x38\",\"type\":\"STRING\",\"memsize\":40,\"file\":\"a.rb\",\"line\":1,"
        "\"generation\":1}\n"
        "not json\n";
    hscope_heap_t *h = load_text(text, 0);
    hscope_tally_t *t = NULL;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.flags = HSCOPE_TALLY_SKIP_DUMPER;
    assert_int_equal(hscope_tally_compute(&t, h, "file", &to, NULL), HSCOPE_OK);
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_tally_write(t, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"total\":{\"count\":1,\"memsize\":40},\"group_count\":1,");
    assert_has(&s, "\"excluded_dumper_objects\":1,\"excluded_tracer\":{\"count\":0,\"memsize\":0},"
                   "\"warnings\":[{\"code\":\"skipped_lines\","
                   "\"message\":\"1 of 4 lines skipped (bad_json 1)\"}]}\n");
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    assert_int_equal(hscope_tally_write(t, &o, collect, &s, NULL), HSCOPE_OK);
    assert_true(strncmp(s.p, "warning: 1 of 4 lines skipped (bad_json 1)\nby file", 50) == 0);
    assert_has(&s, "\nleft out: 1 object allocated by the dumper itself\n");
    free(s.p);
    memset(&s, 0, sizeof(s));
    o.flags = HSCOPE_REPORT_NO_WARNINGS;
    assert_int_equal(hscope_tally_write(t, &o, collect, &s, NULL), HSCOPE_OK);
    assert_lacks(&s, "warning:");
    free(s.p);
    hscope_tally_free(t);
    hscope_heap_free(h);
}

/* The writers' number formats and damage words, for front ends: the same
 * text the writers print (hand-written expectations). */
static void
test_formats_and_damage_text(void **state)
{
    (void)state;
    char b[32];
    hscope_format_bytes(0, b, sizeof(b));
    assert_string_equal(b, "0 B");
    hscope_format_bytes(1023, b, sizeof(b));
    assert_string_equal(b, "1023 B");
    hscope_format_bytes(1536, b, sizeof(b));
    assert_string_equal(b, "1.5 KB");
    hscope_format_bytes(-3 * 1048576LL, b, sizeof(b));
    assert_string_equal(b, "-3.0 MB");
    hscope_format_bytes(5LL << 40, b, sizeof(b));
    assert_string_equal(b, "5.0 TB");
    hscope_format_bytes(1536, b, 4); /* cut as snprintf */
    assert_string_equal(b, "1.5");
    hscope_format_count(0, b, sizeof(b));
    assert_string_equal(b, "0");
    hscope_format_count(999, b, sizeof(b));
    assert_string_equal(b, "999");
    hscope_format_count(1234567, b, sizeof(b));
    assert_string_equal(b, "1,234,567");
    hscope_format_count(UINT64_MAX, b, sizeof(b));
    assert_string_equal(b, "18,446,744,073,709,551,615");

    /* the same dump as test_tally_warnings_and_dumper: 1 of 4 lines bad */
    static const char text[] =
        "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[]}\n"
        "{\"address\":\"0x38\",\"type\":\"STRING\",\"memsize\":40}\n"
        "{\"address\":\"0x60\",\"type\":\"STRING\",\"memsize\":40}\n"
        "not json\n";
    hscope_heap_t *h = load_text(text, 0);
    hscope_load_stats st = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_heap_stats(h, &st), HSCOPE_OK);
    uint64_t sk[HSCOPE_SKIP__COUNT];
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        sk[r] = hscope_heap_skipped(h, r);
    char w[512];
    uint64_t n = hscope_load_warnings_text("d.json", &st, sk, HSCOPE_SKIP__COUNT, w, sizeof(w));
    assert_string_equal(w, "d.json: 1 of 4 lines skipped (bad_json 1)\n");
    assert_int_equal(n, strlen(w));
    n = hscope_load_warnings_text(NULL, &st, sk, HSCOPE_SKIP__COUNT, w, 10); /* cut */
    assert_string_equal(w, "1 of 4 li");
    assert_int_equal(n, strlen("1 of 4 lines skipped (bad_json 1)\n"));
    /* thousands, several reasons, most lines bad, cut short: two lines */
    hscope_load_stats d = HSCOPE_LOAD_STATS_INIT;
    d.lines = 12345;
    d.skipped_lines = 7001;
    d.truncated = 1;
    uint64_t two[HSCOPE_SKIP__COUNT] = { 0 };
    two[HSCOPE_SKIP_BAD_JSON] = 7000;
    two[HSCOPE_SKIP_TRUNCATED] = 1;
    hscope_load_warnings_text("x.gz", &d, two, HSCOPE_SKIP__COUNT, w, sizeof(w));
    char want[512];
    snprintf(want, sizeof(want),
             "x.gz: 7,001 of 12,345 lines skipped (%s 7000, %s 1); most lines could not be "
             "read: is this really a heap dump?\n"
             "x.gz: the dump is truncated (it ends in the middle of a record or gzip stream)\n",
             hscope_skip_reason_name(HSCOPE_SKIP_BAD_JSON),
             hscope_skip_reason_name(HSCOPE_SKIP_TRUNCATED));
    assert_string_equal(w, want);
    /* an undamaged load says nothing; no stats: nothing */
    hscope_load_stats ok = HSCOPE_LOAD_STATS_INIT;
    ok.lines = 3;
    assert_int_equal(hscope_load_warnings_text("a", &ok, NULL, 0, w, sizeof(w)), 0);
    assert_string_equal(w, "");
    assert_int_equal(hscope_load_warnings_text("a", NULL, sk, HSCOPE_SKIP__COUNT, w, sizeof(w)),
                     0);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* objects (show)                                                      */
/* ------------------------------------------------------------------ */

static void
test_objects(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, HSCOPE_LOAD_VALUES);
    uint64_t addrs[3] = { 0x3000, 0xdead, 0x5000 };
    const char *records[3] = {
        NULL, NULL,
        "{\"address\":\"0x5000\",\"type\":\"STRING\",\"value\":\"abc\",\"memsize\":40}" };
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_heap_write_objects(h, addrs, 3, records, &o, collect, &s, NULL),
                     HSCOPE_OK);
    assert_has(&s, "\"objects\":[{\"address\":\"0x3000\",\"type\":\"HASH\",\"class\":\"Hash\","
                   "\"label\":\"Hash\",\"found\":true,\"class_address\":\"0x4000\","
                   "\"detail\":null,\"memsize\":200,\"size\":2,"
                   "\"file\":\"app/controllers/posts_controller.rb\",\"line\":9,\"method\":null,"
                   "\"generation\":2,\"flags\":[],\"record\":null,\"references\":["
                   "{\"address\":\"0x5000\",\"type\":\"STRING\",\"class\":\"String\","
                   "\"label\":\"String\",\"memsize\":40},"
                   "{\"address\":\"0x5028\",\"type\":\"STRING\",\"class\":\"String\","
                   "\"label\":\"String\",\"memsize\":40}],\"referrers\":["
                   "{\"address\":\"0x1000\",\"type\":\"CLASS\",\"class\":\"Class\","
                   "\"label\":\"PostsController\",\"memsize\":500}]},");
    assert_has(&s, "{\"address\":\"0xdead\",\"found\":false},");
    /* without HSCOPE_REPORT_VALUES: no value, the record's value hidden */
    assert_has(&s, "\"record\":{\"address\":\"0x5000\",\"type\":\"STRING\",\"value\":\"(hidden)\","
                   "\"memsize\":40}");
    assert_lacks(&s, "abc");
    /* with it: the heap's value and the record as it is */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o.flags = HSCOPE_REPORT_VALUES;
    assert_int_equal(hscope_heap_write_objects(h, addrs + 2, 1, records + 2, &o, collect, &s, NULL),
                     HSCOPE_OK);
    assert_has(&s, "\"value\":\"abc\",\"record\":{\"address\":\"0x5000\",\"type\":\"STRING\","
                   "\"value\":\"abc\",\"memsize\":40}");
    /* a record that is not JSON is written as a string, never raw */
    free(s.p);
    memset(&s, 0, sizeof(s));
    const char *bad[1] = { "{\"address\":\"0x5000\",\"type\":\"STR" };
    assert_int_equal(hscope_heap_write_objects(h, addrs + 2, 1, bad, &o, collect, &s, NULL),
                     HSCOPE_OK);
    assert_has(&s, "\"record\":\"{\\\"address\\\":\\\"0x5000\\\",\\\"type\\\":\\\"STR\"");
    /* JSON with HSCOPE_REPORT_LISTS_TOP: the first `top` of each list and
     * the counts (2 references, 1 referrer in the fixture) */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_JSON, HSCOPE_REPORT_LISTS_TOP);
    o.top = 1;
    assert_int_equal(hscope_heap_write_objects(h, addrs, 1, NULL, &o, collect, &s, NULL),
                     HSCOPE_OK);
    assert_has(&s, "\"record\":null,\"references_count\":2,\"references\":["
                   "{\"address\":\"0x5000\",\"type\":\"STRING\",\"class\":\"String\","
                   "\"label\":\"String\",\"memsize\":40}],\"referrers_count\":1,\"referrers\":["
                   "{\"address\":\"0x1000\",\"type\":\"CLASS\",\"class\":\"Class\","
                   "\"label\":\"PostsController\",\"memsize\":500}]}");
    /* text: the first `top` references, then how many more */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    o.top = 1;
    assert_int_equal(hscope_heap_write_objects(h, addrs, 1, NULL, &o, collect, &s, NULL),
                     HSCOPE_OK);
    assert_has(&s, "0x3000  HASH  Hash  memsize 200 B  size 2\n"
                   "  allocated:  app/controllers/posts_controller.rb:9, generation 2\n"
                   "  flags:      (none)\n"
                   "references (2):\n"
                   "  0x5000           STRING   String       40 B\n"
                   "  \xe2\x80\xa6 1 more\n"
                   "referenced by (1):\n"
                   "  0x1000           CLASS    PostsController      500 B\n");
    free(s.p);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* generations                                                         */
/* ------------------------------------------------------------------ */

static void
test_generations(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_heap_write_generations(h, &o, collect, &s, NULL), HSCOPE_OK);
    /* untraced: the 3 root classes and 0x7000: 100 * 3 + 48 */
    assert_has(&s, "\"by\":\"file:line:class\",\"untraced\":{\"count\":4,\"memsize\":348},"
                   "\"excluded_dumper_objects\":0,\"generation_count\":3,\"generations\":["
                   "{\"generation\":1,\"count\":1,\"memsize\":500,\"group_count\":1,\"groups\":["
                   "{\"key\":\"app/controllers/posts_controller.rb:3:Class\",\"count\":1,"
                   "\"memsize\":500}]},"
                   "{\"generation\":2,\"count\":2,\"memsize\":240,\"group_count\":2,\"groups\":["
                   "{\"key\":\"app/controllers/posts_controller.rb:9:Hash\",\"count\":1,"
                   "\"memsize\":200},"
                   "{\"key\":\"app/models/post.rb:12:String\",\"count\":1,\"memsize\":40}]},"
                   "{\"generation\":3,\"count\":1,\"memsize\":40,\"group_count\":1,\"groups\":["
                   "{\"key\":\"app/models/post.rb:12:String\",\"count\":1,\"memsize\":40}]}],"
                   "\"warnings\":[]}\n");
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    o.top = 1;
    assert_int_equal(hscope_heap_write_generations(h, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "4 objects without allocation info (348 B)\n\n"
                   "generation      count    memsize  top sites (file:line:class)\n"
                   "         1          1      500 B  "
                   "app/controllers/posts_controller.rb:3:Class (1)\n"
                   "         2          2      240 B  "
                   "app/controllers/posts_controller.rb:9:Hash (1)\n");
    free(s.p);
    /* a forged generation number costs nothing more (ids sorted, not
     * counted per possible generation) */
    hscope_heap_t *g = load_text("{\"address\":\"0x10\",\"type\":\"STRING\",\"memsize\":1,"
                                 "\"generation\":4294967294}\n", 0);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_heap_write_generations(g, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"generations\":[{\"generation\":4294967294,\"count\":1,");
    free(s.p);
    hscope_heap_free(g);
    hscope_heap_free(h);
}

/*
 * The dumper's own objects are left out of the generations, counted and
 * said, as by tally (origin.c's rule: method dump_all, or objspace.rb),
 * unless HSCOPE_REPORT_KEEP_DUMPER.  By hand: generation 3 holds two
 * app.rb:1 Strings (80 B); generation 4 an app.rb:2 Array (80 B), and the
 * dumper's objspace.rb String (40 B) and x.rb:3 dump_all Hash (160 B);
 * one untraced Object (40 B).
 */
static const char gens_dumper[] =
    "{\"address\":\"0x10\",\"type\":\"STRING\",\"file\":\"app.rb\",\"line\":1,"
    "\"generation\":3,\"memsize\":40}\n"
    "{\"address\":\"0x38\",\"type\":\"STRING\",\"file\":\"app.rb\",\"line\":1,"
    "\"generation\":3,\"memsize\":40}\n"
    "{\"address\":\"0x60\",\"type\":\"ARRAY\",\"file\":\"app.rb\",\"line\":2,"
    "\"generation\":4,\"memsize\":80}\n"
    "{\"address\":\"0x88\",\"type\":\"STRING\",\"file\":\"/usr/lib/ruby/3.1.0/objspace.rb\","
    "\"line\":87,\"method\":\"dump_all\",\"generation\":4,\"memsize\":40}\n"
    "{\"address\":\"0xb0\",\"type\":\"HASH\",\"file\":\"x.rb\",\"line\":3,"
    "\"method\":\"dump_all\",\"generation\":4,\"memsize\":160}\n"
    "{\"address\":\"0xd8\",\"type\":\"OBJECT\",\"memsize\":40}\n";

static void
test_generations_dumper(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(gens_dumper, 0);
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_heap_write_generations(h, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"untraced\":{\"count\":1,\"memsize\":40},\"excluded_dumper_objects\":2,"
                   "\"generation_count\":2,\"generations\":["
                   "{\"generation\":3,\"count\":2,\"memsize\":80,");
    assert_has(&s, "{\"generation\":4,\"count\":1,\"memsize\":80,\"group_count\":1,");
    free(s.p);
    memset(&s, 0, sizeof(s));
    o.flags |= HSCOPE_REPORT_KEEP_DUMPER;
    assert_int_equal(hscope_heap_write_generations(h, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"excluded_dumper_objects\":0,");
    assert_has(&s, "{\"generation\":4,\"count\":3,\"memsize\":280,\"group_count\":3,");
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    assert_int_equal(hscope_heap_write_generations(h, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "1 object without allocation info (40 B)\n"
                   "left out: 2 objects allocated by the dumper itself\n");
    free(s.p);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* dominators, retained, folded                                        */
/* ------------------------------------------------------------------ */

/*
 * With class edges every object is reachable: 0x1000 dominates its class
 * 0x2000 and the Hash 0x3000, which dominates its class 0x4000 and the
 * two Strings; the String class 0x6000 is reached from both roots, so only
 * the super-root "(roots)" dominates it.  Retained: 0x1000 500 + 100 +
 * 200 + 100 + 40 + 40 = 980 (6 objects); 0x3000 380 (4); 0x7000 48 (1).
 */
static void
test_dominators(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    hscope_domtree_t *t = domtree(h, 0);
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    o.depth = 1;
    assert_int_equal(hscope_domtree_write(t, HSCOPE_ID_NONE, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"class_edges\":true,\"reachable\":{\"count\":8,\"memsize\":1128},"
                   "\"unreachable\":{\"count\":0,\"memsize\":0},\"depth\":1,\"top\":["
                   "{\"root\":\"vm\",\"children_total\":1,\"children\":[{\"address\":\"0x1000\","
                   "\"type\":\"CLASS\",\"class\":\"Class\",\"label\":\"PostsController\","
                   "\"file\":\"app/controllers/posts_controller.rb\",\"line\":3,\"memsize\":500,\"retained\":{\"count\":6,\"memsize\":980}}]},"
                   "{\"root\":\"machine_context\",\"children_total\":1,\"children\":["
                   "{\"address\":\"0x7000\",\"type\":\"STRING\",\"class\":\"String\","
                   "\"label\":\"String\",\"file\":null,\"line\":0,\"memsize\":48,\"retained\":{\"count\":1,\"memsize\":48}}]},"
                   "{\"root\":\"(roots)\",\"children_total\":1,\"children\":["
                   "{\"address\":\"0x6000\",\"type\":\"CLASS\",\"class\":\"<hidden>\","
                   "\"label\":\"String\",\"file\":null,\"line\":0,\"memsize\":100,"
                   "\"retained\":{\"count\":1,\"memsize\":100}}]}],\"warnings\":[]}\n");
    /* focus on 0x3000, 2 levels: its chain, its children largest first,
     * ties by address (0x4000 100 before the Strings, 0x5000 before 0x5028) */
    free(s.p);
    memset(&s, 0, sizeof(s));
    hscope_id hash;
    assert_int_equal(hscope_heap_find(h, 0x3000, &hash), HSCOPE_OK);
    o.depth = 2;
    o.top = 2;
    assert_int_equal(hscope_domtree_write(t, hash, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"focus\":\"0x3000\",\"root\":\"vm\",\"chain\":["
                   "{\"address\":\"0x1000\",\"type\":\"CLASS\",\"class\":\"Class\","
                   "\"label\":\"PostsController\"},{\"address\":\"0x3000\",\"type\":\"HASH\","
                   "\"class\":\"Hash\",\"label\":\"Hash\"}],\"tree\":{\"address\":\"0x3000\","
                   "\"type\":\"HASH\",\"class\":\"Hash\",\"label\":\"Hash\",\"file\":\"app/controllers/posts_controller.rb\",\"line\":9,\"memsize\":200,"
                   "\"retained\":{\"count\":4,\"memsize\":380},\"children_total\":3,\"children\":["
                   "{\"address\":\"0x4000\",\"type\":\"CLASS\",\"class\":\"<hidden>\","
                   "\"label\":\"Hash\",\"file\":null,\"line\":0,\"memsize\":100,\"retained\":{\"count\":1,\"memsize\":100},"
                   "\"children_total\":0,\"children\":[]},"
                   "{\"address\":\"0x5000\",\"type\":\"STRING\",");
    assert_lacks(&s, "0x5028");
    /* text: thousands separators and plurals */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    o.depth = 2;
    assert_int_equal(hscope_domtree_write(t, HSCOPE_ID_NONE, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "8 reachable objects; 0 unreachable (0 B)\n\n"
                   "root vm (1 object directly below)\n"
                   "  0x1000 CLASS PostsController  retained 980 B (6 objects), self 500 B\n"
                   "    0x3000 HASH Hash  retained 380 B (4 objects), self 200 B\n"
                   "    0x2000 CLASS Class  retained 100 B (1 object), self 100 B\n");
    assert_has(&s, "\nroot (roots) (1 object directly below)\n"
                   "  0x6000 CLASS String  retained 100 B (1 object), self 100 B\n");
    free(s.p);
    hscope_domtree_free(t);
    hscope_heap_free(h);
}

/*
 * The children shown are the first --top in the order: largest retained
 * first, ties by address, whatever the order of the dump.  The Array's
 * Strings come in the dump from the highest address down, the largest
 * last; the first three are 0x3000 (80 B), then the two lowest of the
 * 40-byte ones, 0x4000 and 0x5000, which come after four others tied
 * with them.
 */
static void
test_dominators_top_ties(void **state)
{
    (void)state;
    static const char dump[] =
        "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x100\"]}\n"
        "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n"
        "{\"address\":\"0x100\",\"type\":\"ARRAY\",\"references\":[\"0x9000\",\"0x8000\","
        "\"0x7000\",\"0x6000\",\"0x5000\",\"0x4000\",\"0x3000\"],\"memsize\":1000,\"length\":7}\n"
        "{\"address\":\"0x9000\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":40}\n"
        "{\"address\":\"0x8000\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":40}\n"
        "{\"address\":\"0x7000\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":40}\n"
        "{\"address\":\"0x6000\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":40}\n"
        "{\"address\":\"0x5000\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":40}\n"
        "{\"address\":\"0x4000\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":40}\n"
        "{\"address\":\"0x3000\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":80}\n";
    hscope_heap_t *h = load_text(dump, 0);
    hscope_domtree_t *t = domtree(h, HSCOPE_DOM_NO_CLASS_EDGES);
    for (int focus = 0; focus < 2; focus++) {
        sink s = { 0 };
        hscope_report_options o = ropts(HSCOPE_FORMAT_TEXT, 0);
        o.depth = 2;
        o.top = 3;
        hscope_id arr = HSCOPE_ID_NONE;
        if (focus)
            assert_int_equal(hscope_heap_find(h, 0x100, &arr), HSCOPE_OK);
        assert_int_equal(hscope_domtree_write(t, arr, &o, collect, &s, NULL), HSCOPE_OK);
        assert_has(&s, "0x3000 STRING String  retained 80 B (1 object), self 80 B\n"
                       "    0x4000 STRING String  retained 40 B (1 object), self 40 B\n"
                       "    0x5000 STRING String  retained 40 B (1 object), self 40 B\n");
        assert_lacks(&s, "0x6000");
        assert_lacks(&s, "0x9000");
        free(s.p);
    }
    hscope_domtree_free(t);
    hscope_heap_free(h);
}

/* Lines of a text, sorted (folded stacks: one line per object). */
static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
test_folded_and_retained(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    hscope_domtree_t *t = domtree(h, 0);
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_FOLDED, 0);
    assert_int_equal(hscope_domtree_write(t, HSCOPE_ID_NONE, &o, collect, &s, NULL), HSCOPE_OK);
    static const char *want[] = {
        "(roots);CLASS_String 100",
        "machine_context;STRING_String 48",
        "vm;CLASS_PostsController 500",
        "vm;CLASS_PostsController;CLASS_Class 100",
        "vm;CLASS_PostsController;HASH_Hash 200",
        "vm;CLASS_PostsController;HASH_Hash;CLASS_Hash 100",
        "vm;CLASS_PostsController;HASH_Hash;STRING_String 40",
        "vm;CLASS_PostsController;HASH_Hash;STRING_String 40",
    };
    char *lines[16];
    size_t n = 0;
    for (char *p = strtok(s.p, "\n"); p && n < 16; p = strtok(NULL, "\n"))
        lines[n++] = p;
    assert_int_equal(n, 8);
    qsort(lines, n, sizeof(char *), cmp_str);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(lines[i], want[i]);
    free(s.p);
    /* retained: largest first, ties by address */
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_JSON, 0);
    o.top = 4;
    assert_int_equal(hscope_domtree_write_retained(t, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "{\"kind\":\"retained\",");
    assert_has(&s, "\"objects\":[{\"address\":\"0x1000\",\"type\":\"CLASS\",\"class\":\"Class\","
                   "\"label\":\"PostsController\",\"file\":\"app/controllers/posts_controller.rb\",\"line\":3,\"memsize\":500,"
                   "\"retained\":{\"count\":6,\"memsize\":980}},"
                   "{\"address\":\"0x3000\",\"type\":\"HASH\",\"class\":\"Hash\",\"label\":\"Hash\","
                   "\"file\":\"app/controllers/posts_controller.rb\",\"line\":9,\"memsize\":200,\"retained\":{\"count\":4,\"memsize\":380}},"
                   "{\"address\":\"0x2000\",");
    assert_has(&s, "{\"address\":\"0x4000\",\"type\":\"CLASS\",\"class\":\"<hidden>\","
                   "\"label\":\"Hash\",\"file\":null,\"line\":0,\"memsize\":100,\"retained\":{\"count\":1,\"memsize\":100}}],");
    free(s.p);
    /* text: a class name is never cut: 64 - 2 - 17 - 33 leaves 12 columns
     * for "TYPE label", the key column grows to "CLASS PostsController" (21)
     * and the other columns stay aligned after it */
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    o.width = 64;
    assert_int_equal(hscope_domtree_write_retained(t, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "  0x1000           CLASS PostsController      980 B          6      500 B\n");
    assert_lines_fit(&s, 64 + 21 - 12);
    free(s.p);
    hscope_domtree_free(t);
    hscope_heap_free(h);
}

/*
 * Retained size per class, each object under its topmost dominator of its
 * class: Class {0x1000} 980/6; Hash {0x3000} 380/4; <hidden> {0x2000,
 * 0x4000, 0x6000}: three separate tops, 100 each; String {0x5000, 0x5028,
 * 0x7000}: 40 + 40 + 48.
 */
static void
test_domtree_tally(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    hscope_domtree_t *t = domtree(h, 0);
    hscope_tally_t *r = NULL;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.sort = HSCOPE_SORT_MEMSIZE;
    assert_int_equal(hscope_domtree_tally(&r, t, "class", &to, NULL), HSCOPE_OK);
    hscope_domtree_free(t); /* the tally stands alone */
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_tally_write(r, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "{\"kind\":\"retained\",");
    assert_has(&s, "\"dumps\":[{\"path\":null,\"objects\":8}],\"by\":\"class\",\"group_count\":4,"
                   "\"groups\":[{\"key\":\"Class\",\"count\":6,\"memsize\":980},"
                   "{\"key\":\"Hash\",\"count\":4,\"memsize\":380},"
                   "{\"key\":\"<hidden>\",\"count\":3,\"memsize\":300},"
                   "{\"key\":\"String\",\"count\":3,\"memsize\":128}],"
                   "\"excluded_tracer\":{\"count\":0,\"memsize\":0},\"warnings\":[]}\n");
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    assert_int_equal(hscope_tally_write(r, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "retained by class     retained    objects\n"
                   "  Class                  980 B          6\n");
    free(s.p);
    hscope_tally_free(r);
    /* no flags, known keys only */
    t = domtree(h, 0);
    to.flags = HSCOPE_TALLY_SKIP_DUMPER;
    assert_int_equal(hscope_domtree_tally(&r, t, "class", &to, NULL), HSCOPE_ERR_UNSUPPORTED);
    assert_null(r);
    to.flags = 0;
    assert_int_equal(hscope_domtree_tally(&r, t, "colour", &to, NULL), HSCOPE_ERR_UNSUPPORTED);
    hscope_domtree_free(t);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* paths                                                               */
/* ------------------------------------------------------------------ */

/*
 * vm -> 0x100 -> 0x300 and vm -> 0x200 -> 0x400 -> 0x300: the shortest
 * path to 0x300 is [0x100, 0x300]; through its other referrer 0x400,
 * [0x200, 0x400, 0x300].  No classes.
 */
static const char diamond[] =
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x100\",\"0x200\"]}\n"
    "{\"address\":\"0x100\",\"type\":\"OBJECT\",\"references\":[\"0x300\"],\"memsize\":40}\n"
    "{\"address\":\"0x200\",\"type\":\"OBJECT\",\"references\":[\"0x400\"],\"memsize\":40}\n"
    "{\"address\":\"0x300\",\"type\":\"STRING\",\"memsize\":40,\"file\":\"a/b.rb\",\"line\":5}\n"
    "{\"address\":\"0x400\",\"type\":\"OBJECT\",\"references\":[\"0x500\",\"0x300\"],\"memsize\":40}\n"
    "{\"address\":\"0x500\",\"type\":\"OBJECT\",\"memsize\":40}\n"
    "{\"address\":\"0x600\",\"type\":\"OBJECT\",\"memsize\":40}\n";

static void
test_paths(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(diamond, 0);
    hscope_paths_t *p = NULL;
    assert_int_equal(hscope_paths_compute(&p, h, NULL, NULL), HSCOPE_OK);
    hscope_id ids[2];
    assert_int_equal(hscope_heap_find(h, 0x300, &ids[0]), HSCOPE_OK);
    assert_int_equal(hscope_heap_find(h, 0x600, &ids[1]), HSCOPE_OK); /* unreachable */
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    o.max_paths = 3;
    assert_int_equal(hscope_paths_write(p, ids, 2, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"class_edges\":true,\"max_paths\":3,\"paths\":["
                   "{\"target\":\"0x300\",\"root\":\"vm\",\"path\":["
                   "{\"address\":\"0x100\",\"type\":\"OBJECT\",\"class\":\"<hidden>\",\"label\":\"<hidden>\"},"
                   "{\"address\":\"0x300\",\"type\":\"STRING\",\"class\":\"<hidden>\",\"label\":\"<hidden>\"}]},"
                   "{\"target\":\"0x300\",\"root\":\"vm\",\"path\":["
                   "{\"address\":\"0x200\",\"type\":\"OBJECT\",\"class\":\"<hidden>\",\"label\":\"<hidden>\"},"
                   "{\"address\":\"0x400\",\"type\":\"OBJECT\",\"class\":\"<hidden>\",\"label\":\"<hidden>\"},"
                   "{\"address\":\"0x300\",\"type\":\"STRING\",\"class\":\"<hidden>\",\"label\":\"<hidden>\"}]},"
                   "{\"target\":\"0x600\",\"root\":null,\"path\":[]}],\"warnings\":[]}\n");
    /* DOT: the root, every object and every edge once; the target filled */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o.format = HSCOPE_FORMAT_DOT;
    assert_int_equal(hscope_paths_write(p, ids, 1, &o, collect, &s, NULL), HSCOPE_OK);
    hscope_id i100, i200, i300, i400;
    hscope_heap_find(h, 0x100, &i100);
    hscope_heap_find(h, 0x200, &i200);
    hscope_heap_find(h, 0x300, &i300);
    hscope_heap_find(h, 0x400, &i400);
    char want[2048];
    snprintf(want, sizeof(want),
             "digraph heapscope {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n"
             "  \"root:vm\" [shape=ellipse, style=filled, fillcolor=\"#cfe2f3\"];\n"
             "  n%u [label=\"OBJECT <hidden>\\n0x100\"];\n"
             "  n%u [label=\"STRING <hidden>\\n0x300\\nb.rb:5\", style=filled, fillcolor=\"#f4a6a6\"];\n"
             "  \"root:vm\" -> n%u;\n"
             "  n%u -> n%u [label=\"[0]\", fontsize=8];\n"
             "  n%u [label=\"OBJECT <hidden>\\n0x200\"];\n"
             "  n%u [label=\"OBJECT <hidden>\\n0x400\"];\n"
             "  \"root:vm\" -> n%u;\n"
             "  n%u -> n%u [label=\"[0]\", fontsize=8];\n"
             "  n%u -> n%u [label=\"[1]\", fontsize=8];\n"
             "}\n",
             i100, i300, i100, i100, i300, i200, i400, i200, i200, i400, i400, i300);
    assert_string_equal(s.p, want);
    /* text: a path per line, steps counted */
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    assert_int_equal(hscope_paths_write(p, ids, 2, &o, collect, &s, NULL), HSCOPE_OK);
    assert_string_equal(s.p, "0x300: path 1 from root vm (2 steps)\n"
                             "  0x100 OBJECT <hidden>\n"
                             "   0x300 STRING <hidden>  (a/b.rb:5)\n\n"
                             "0x600: not reachable from any root (garbage the dump caught)\n\n");
    free(s.p);
    /* an id out of range */
    hscope_id bad = 99;
    memset(&s, 0, sizeof(s));
    assert_int_equal(hscope_paths_write(p, &bad, 1, &o, collect, &s, NULL), HSCOPE_ERR_INVALID_ARG);
    free(s.p);
    hscope_paths_free(p);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* diff and suspects                                                   */
/* ------------------------------------------------------------------ */

#define STR_CLASS "{\"address\":\"0x6000\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n"
#define ROOT_1000 "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x1000\"]}\n"
#define LEAK_2000 "{\"address\":\"0x2000\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40," \
                  "\"file\":\"a.rb\",\"line\":7,\"generation\":5}\n"
#define LEAK_2028 "{\"address\":\"0x2028\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40," \
                  "\"file\":\"a.rb\",\"line\":7,\"generation\":5}\n"

/* A: 0x1000 and the class.  B: + two Strings of generation 5 and a Hash
 * (6).  C: the Strings still alive, held by 0x1000; the Hash gone; a new
 * String of generation 7.  Leaked: the two Strings, 80 bytes. */
static const char dump_a[] = ROOT_1000 STR_CLASS
    "{\"address\":\"0x1000\",\"type\":\"OBJECT\",\"memsize\":40,\"file\":\"a.rb\",\"line\":1,"
    "\"generation\":1}\n";
static const char dump_b[] = ROOT_1000 STR_CLASS
    "{\"address\":\"0x1000\",\"type\":\"OBJECT\",\"memsize\":40,\"file\":\"a.rb\",\"line\":1,"
    "\"generation\":1,\"references\":[\"0x3000\"]}\n" LEAK_2000 LEAK_2028
    "{\"address\":\"0x3000\",\"type\":\"HASH\",\"memsize\":200,\"file\":\"b.rb\",\"line\":2,"
    "\"generation\":6,\"references\":[\"0x2000\",\"0x2028\"]}\n";
static const char dump_c[] = ROOT_1000 STR_CLASS
    "{\"address\":\"0x1000\",\"type\":\"OBJECT\",\"memsize\":40,\"file\":\"a.rb\",\"line\":1,"
    "\"generation\":1,\"references\":[\"0x2000\",\"0x2028\"]}\n" LEAK_2000 LEAK_2028
    "{\"address\":\"0x4000\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40,"
    "\"file\":\"c.rb\",\"line\":3,\"generation\":7}\n";

static void
test_diff_and_suspects(void **state)
{
    (void)state;
    hscope_heap_t *a = load_text(dump_a, 0), *b = load_text(dump_b, 0), *c = load_text(dump_c, 0);
    hscope_diff_t *d = NULL;
    assert_int_equal(hscope_diff_compute(&d, a, b, c, NULL, NULL), HSCOPE_OK);
    hscope_heap_free(a);
    hscope_heap_free(b);
    hscope_heap_free(c);
    const char *names[3] = { "a", "b", "c" };
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, HSCOPE_REPORT_ADDRESSES);
    o.dump_names = names;
    o.dump_name_count = 3;
    /* groups NULL: by file:line:class */
    assert_int_equal(hscope_diff_write(d, NULL, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "{\"kind\":\"diff\",");
    assert_has(&s, "\"dumps\":[{\"path\":\"a\",\"objects\":2},{\"path\":\"b\",\"objects\":5},"
                   "{\"path\":\"c\",\"objects\":5}],\"leaked\":{\"count\":2,\"memsize\":80},"
                   "\"excluded_dumper_objects\":0,\"excluded_tracer\":{\"count\":0,\"memsize\":0},"
                   "\"reused_addresses\":0,\"object_id_matches\":0,"
                   "\"moved_objects\":0,\"notes\":[],\"by\":\"file:line:class\","
                   "\"group_count\":1,\"groups\":[{\"key\":\"a.rb:7:String\",\"count\":2,"
                   "\"memsize\":80,\"addresses\":[\"0x2000\",\"0x2028\"]}],\"warnings\":[]}\n");
    /* text, 2 dumps' wording aside: plurals and the addresses under the row */
    free(s.p);
    memset(&s, 0, sizeof(s));
    hscope_tally_t *groups = NULL;
    assert_int_equal(hscope_diff_tally(&groups, d, "class", NULL, NULL), HSCOPE_OK);
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    o.dump_names = names;
    o.dump_name_count = 3;
    assert_int_equal(hscope_diff_write(d, groups, &o, collect, &s, NULL), HSCOPE_OK);
    assert_string_equal(s.p, "A: a (2 objects)\nB: b (5 objects)\nC: c (5 objects)\n\n"
                             "leaked: 2 objects, 80 B (new in B since A, still alive in C)\n\n"
                             "by class        count    memsize\n"
                             "  String            2       80 B\n"
                             "      0x2000 0x2028\n");
    free(s.p);
    /* a tally of another heap is not this diff's */
    hscope_tally_t *other = NULL;
    hscope_heap_t *x = load_text(dump_a, 0);
    assert_int_equal(hscope_tally_compute(&other, x, "type", NULL, NULL), HSCOPE_OK);
    memset(&s, 0, sizeof(s));
    assert_int_equal(hscope_diff_write(d, other, &o, collect, &s, NULL), HSCOPE_ERR_INVALID_ARG);
    free(s.p);
    hscope_tally_free(other);
    hscope_heap_free(x);
    hscope_tally_free(groups);

    /* suspects: 0x1000 holds both Strings (no class edges: retained
     * 40 + 80 = 120, 3 objects); its path is itself, from vm */
    hscope_suspects_t *sus = NULL;
    hscope_dom_options dopt = HSCOPE_DOM_OPTIONS_INIT;
    dopt.flags = HSCOPE_DOM_NO_CLASS_EDGES;
    assert_int_equal(hscope_suspects_compute(&sus, d, &dopt, NULL), HSCOPE_OK);
    hscope_diff_free(d); /* the suspects keep it */
    assert_ptr_equal(hscope_diff_heap(hscope_suspects_diff(sus)),
                     hscope_domtree_heap(hscope_suspects_domtree(sus)));
    assert_int_equal(hscope_holders_count(hscope_suspects_holders(sus)), 1);
    hscope_id path[4];
    int32_t cat = 7;
    assert_int_equal(hscope_suspects_path(sus, 0, path, 4, &cat), 1);
    assert_int_equal(cat, 0);
    assert_int_equal(hscope_heap_object_address(hscope_diff_heap(hscope_suspects_diff(sus)), path[0]),
                     0x1000);
    assert_int_equal(hscope_suspects_path(sus, 5, path, 4, &cat), 0);
    assert_int_equal(cat, -1);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_suspects_write(sus, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"leaked\":{\"count\":2,\"memsize\":80},\"excluded_dumper_objects\":0,"
                   "\"excluded_tracer\":{\"count\":0,\"memsize\":0},\"reused_addresses\":0,\"object_id_matches\":0,\"moved_objects\":0,\"notes\":[],"
                   "\"class_edges\":false,\"holder_count\":1,\"suspects\":["
                   "{\"rank\":1,\"address\":\"0x1000\",\"type\":\"OBJECT\",\"class\":\"<hidden>\","
                   "\"label\":\"<hidden>\",\"file\":\"a.rb\",\"line\":1,"
                   "\"retained\":{\"count\":3,\"memsize\":120},\"leaked\":{\"count\":2,\"memsize\":80},"
                   "\"root\":\"vm\",\"conservative_root\":false,"
                   "\"path\":[{\"address\":\"0x1000\",\"type\":\"OBJECT\","
                   "\"class\":\"<hidden>\",\"label\":\"<hidden>\"}],"
                   /* no class on the path; both Strings sit in 0x1000 */
                   "\"held_by\":{\"owner\":null,\"steps\":0},\"vm_table\":null,"
                   "\"entries\":2,\"site_count\":1,\"sites\":[{\"file\":\"a.rb\",\"line\":7,"
                   "\"class\":\"String\",\"method\":null,\"count\":2,\"memsize\":80,"
                   "\"entries\":2,\"kept\":{\"count\":2,\"memsize\":80}}]}],"
                   "\"warnings\":[]}\n");
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    assert_int_equal(hscope_suspects_write(sus, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\n1. 0x1000 OBJECT <hidden> holds 2 leaked objects (80 B), allocated at a.rb:1\n"
                   "   held by: root vm -> <hidden>\n"
                   "   leaked objects allocated at (what put them in it first):\n"
                   "     a.rb:7:String: 2 objects, 80 B; 2 put in it, keeping 2 objects (80 B)\n"
                   "   path from root vm: 0x1000 OBJECT <hidden>\n");
    free(s.p);
    hscope_suspects_free(sus);
}

/* A root category holding a leaked object directly: "(roots)" nowhere,
 * the category's name, 1 leaked object. */
static void
test_suspects_root_holder(void **state)
{
    (void)state;
    hscope_heap_t *a = load_text("{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[]}\n"
                                 "{\"address\":\"0x10\",\"type\":\"OBJECT\",\"memsize\":8}\n", 0);
    hscope_heap_t *b = load_text("{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x38\"]}\n"
                                 "{\"address\":\"0x10\",\"type\":\"OBJECT\",\"memsize\":8}\n"
                                 "{\"address\":\"0x38\",\"type\":\"OBJECT\",\"memsize\":40}\n", 0);
    hscope_diff_t *d = NULL;
    assert_int_equal(hscope_diff_compute(&d, a, b, NULL, NULL, NULL), HSCOPE_OK);
    hscope_suspects_t *sus = NULL;
    assert_int_equal(hscope_suspects_compute(&sus, d, NULL, NULL), HSCOPE_OK);
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_suspects_write(sus, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "\"suspects\":[{\"rank\":1,\"address\":null,\"type\":\"ROOT\",\"class\":null,"
                   "\"label\":\"vm\",\"file\":null,\"line\":null,\"retained\":null,"
                   "\"leaked\":{\"count\":1,\"memsize\":40},\"root\":\"vm\","
                   "\"conservative_root\":false,\"path\":[],"
                   "\"held_by\":{\"owner\":null,\"steps\":0},\"vm_table\":null,"
                   "\"entries\":1,\"site_count\":1,\"sites\":[{\"file\":null,\"line\":null,"
                   "\"class\":\"<hidden>\",\"method\":null,\"count\":1,\"memsize\":40,"
                   "\"entries\":1,\"kept\":{\"count\":1,\"memsize\":40}}]}]");
    free(s.p);
    memset(&s, 0, sizeof(s));
    o = ropts(HSCOPE_FORMAT_TEXT, 0);
    assert_int_equal(hscope_suspects_write(sus, &o, collect, &s, NULL), HSCOPE_OK);
    assert_has(&s, "new in B: 1 object, 40 B (absent from A)\n");
    assert_has(&s, "\n1. root vm directly holds 1 leaked object (40 B)\n");
    free(s.p);
    hscope_suspects_free(sus);
    hscope_diff_free(d);
    hscope_heap_free(a);
    hscope_heap_free(b);
}

/* ------------------------------------------------------------------ */
/* options and the sink                                                */
/* ------------------------------------------------------------------ */

static void
test_options_and_sink(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    hscope_domtree_t *t = domtree(h, 0);
    hscope_error err = HSCOPE_ERROR_INIT;
    sink s = { 0 };
    /* formats a result has no writer for */
    hscope_report_options o = ropts(HSCOPE_FORMAT_DOT, 0);
    assert_int_equal(hscope_heap_write_summary(h, &o, collect, &s, &err), HSCOPE_ERR_UNSUPPORTED);
    o.format = HSCOPE_FORMAT_CSV;
    assert_int_equal(hscope_domtree_write(t, HSCOPE_ID_NONE, &o, collect, &s, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    o.format = HSCOPE_FORMAT_FOLDED;
    assert_int_equal(hscope_domtree_write_retained(t, &o, collect, &s, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    /* unknown flags; a size not set; a newer struct with a non-zero tail */
    o = ropts(0, 0x80000000u);
    assert_int_equal(hscope_heap_write_generations(h, &o, collect, &s, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    o = ropts(0, 0);
    o.size = 0;
    assert_int_equal(hscope_heap_write_summary(h, &o, collect, &s, &err), HSCOPE_ERR_INVALID_ARG);
    struct { hscope_report_options o; uint64_t extra; } big;
    memset(&big, 0, sizeof(big));
    big.o.size = sizeof(big);
    big.extra = 1;
    assert_int_equal(hscope_heap_write_summary(h, &big.o, collect, &s, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    big.extra = 0;
    assert_int_equal(hscope_heap_write_summary(h, &big.o, collect, &s, &err), HSCOPE_OK);
    /* NULL arguments */
    assert_int_equal(hscope_heap_write_summary(NULL, NULL, collect, &s, &err),
                     HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_heap_write_summary(h, NULL, NULL, &s, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_heap_write_objects(h, NULL, 1, NULL, NULL, collect, &s, &err),
                     HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_domtree_write(t, 99, NULL, collect, &s, &err), HSCOPE_ERR_INVALID_ARG);
    free(s.p);
    /* a sink that fails: HSCOPE_ERR_IO, first error wins, no more calls */
    sink f = { 0 };
    f.fail_after = 1;
    hscope_error_init(&err);
    o = ropts(HSCOPE_FORMAT_JSON, 0);
    assert_int_equal(hscope_domtree_write(t, HSCOPE_ID_NONE, &o, collect, &f, &err), HSCOPE_ERR_IO);
    assert_int_equal(err.status, HSCOPE_ERR_IO);
    assert_int_equal(f.calls, 1);
    free(f.p);
    hscope_domtree_free(t);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* the V8 heap snapshot export                              */
/* ------------------------------------------------------------------ */

static void
test_heapsnapshot(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    hscope_error err = HSCOPE_ERROR_INIT;
    sink s = { 0 };
    hscope_report_options o = ropts(HSCOPE_FORMAT_HEAPSNAPSHOT, 0);
    assert_int_equal(hscope_heap_write_export(h, &o, collect, &s, &err), HSCOPE_OK);
    assert_non_null(s.p);
    assert_memory_equal(s.p, "{\"snapshot\":{\"meta\":{\"node_fields\":[\"type\",\"name\",\"id\",", 38);
    /* 8 objects + the root + 2 categories; edges: root -> vm,
     * machine_context (2), their references (2), 0x1000 -> 0x3000 and its
     * class 0x2000 (2), 0x3000 -> 0x5000, 0x5028 and its class (3), the
     * three Strings -> their class (3): 12.  Sites: 3 (file:line) + root. */
    assert_non_null(strstr(s.p, "\"node_count\":11,\"edge_count\":12,\"trace_function_count\":4}"));
    /* the root, then vm (id 2, one edge) and machine_context (id 4) */
    assert_non_null(strstr(s.p, "\"nodes\":[9,"));
    assert_non_null(strstr(s.p, ",2,0,1,0,0,\n9,"));
    /* 0x5028 STRING: object, id (0x5028 >> 2) | 1 = 5131, 40 bytes, 1
     * edge (its class); 0x7000: 7169, 48 bytes, no site */
    assert_non_null(strstr(s.p, ",5131,40,1,"));
    assert_non_null(strstr(s.p, ",7169,48,1,0,0"));
    /* 0x1000 the class PostsController: a closure (5), 500 bytes, 2 edges */
    const char *pc = strstr(s.p, ",1025,500,2,");
    assert_non_null(pc);
    while (pc > s.p && pc[-1] != '\n')
        pc--;
    assert_memory_equal(pc, "5,", 2);
    assert_non_null(strstr(s.p, "\"(vm)\""));
    assert_non_null(strstr(s.p, "\"(machine_context)\""));
    assert_non_null(strstr(s.p, "\"app/models/post.rb\""));
    assert_null(strstr(s.p, "abc")); /* string values never */
    assert_memory_equal(s.p + s.len - 3, "]}\n", 3);
    free(s.p);
    /* only that format; arguments; a failing sink */
    o.format = HSCOPE_FORMAT_JSON;
    assert_int_equal(hscope_heap_write_export(h, &o, collect, &s, &err), HSCOPE_ERR_UNSUPPORTED);
    o.format = HSCOPE_FORMAT_HEAPSNAPSHOT;
    assert_int_equal(hscope_heap_write_export(NULL, &o, collect, &s, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_heap_write_export(h, &o, NULL, &s, &err), HSCOPE_ERR_INVALID_ARG);
    sink f = { 0 };
    f.fail_after = 1;
    hscope_error_init(&err);
    assert_int_equal(hscope_heap_write_export(h, &o, collect, &f, &err), HSCOPE_ERR_IO);
    assert_int_equal(f.calls, 1);
    free(f.p);
    hscope_heap_free(h);
}

/* ------------------------------------------------------------------ */
/* the pprof export                                                    */
/* ------------------------------------------------------------------ */

/* gunzip s into a malloc'd buffer (*n bytes). */
static unsigned char *
gunzip(const sink *s, size_t *n)
{
    size_t cap = 1 << 20;
    unsigned char *out = malloc(cap);
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (unsigned char *)s->p;
    z.avail_in = (uInt)s->len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    *n = cap - z.avail_out;
    inflateEnd(&z);
    return out;
}

static int
has(const unsigned char *p, size_t n, const void *what, size_t wn)
{
    for (size_t i = 0; i + wn <= n; i++)
        if (memcmp(p + i, what, wn) == 0)
            return 1;
    return 0;
}

static void
test_pprof(void **state)
{
    (void)state;
    hscope_heap_t *h = load_text(fixture, 0);
    hscope_error err = HSCOPE_ERROR_INIT;
    sink s = { 0 };
    /* time_nanos (field 9: key 0x48) 1714564800 s as a varint, by hand:
     * 1714564800000000000 in 7-bit groups, low first */
    int64_t t = 1714564800000000000LL;
    unsigned char want[12];
    size_t wn = 0;
    want[wn++] = 0x48;
    for (uint64_t v = (uint64_t)t; ; v >>= 7) {
        want[wn++] = (unsigned char)(v < 0x80 ? v : (v & 0x7f) | 0x80);
        if (v < 0x80)
            break;
    }
    /* format 0 means pprof for hscope_heap_write_pprof */
    assert_int_equal(hscope_heap_write_pprof(h, t, NULL, collect, &s, &err), HSCOPE_OK);
    assert_true(s.len > 20 && (unsigned char)s.p[0] == 0x1f && (unsigned char)s.p[1] == 0x8b);
    size_t n;
    unsigned char *pb = gunzip(&s, &n);
    assert_true(has(pb, n, want, wn));
    /* string table entries (field 6: key 0x32, length, bytes) */
    assert_true(has(pb, n, "\x32\x0binuse_space", 13));
    assert_true(has(pb, n, "\x32\x0dinuse_objects", 15));
    assert_true(has(pb, n, "\x32\x12" "app/models/post.rb", 20));
    assert_false(has(pb, n, "abc", 3)); /* string values never */
    free(pb);
    free(s.p);
    /* hscope_heap_write_export: the same profile without a time */
    memset(&s, 0, sizeof(s));
    hscope_report_options o = ropts(HSCOPE_FORMAT_PPROF, 0);
    assert_int_equal(hscope_heap_write_export(h, &o, collect, &s, &err), HSCOPE_OK);
    pb = gunzip(&s, &n);
    assert_false(has(pb, n, want, wn));
    assert_true(has(pb, n, "\x32\x0binuse_space", 13));
    free(pb);
    free(s.p);
    /* only pprof; arguments; a failing sink */
    o.format = HSCOPE_FORMAT_JSON;
    assert_int_equal(hscope_heap_write_pprof(h, t, &o, collect, &s, &err), HSCOPE_ERR_UNSUPPORTED);
    o.format = HSCOPE_FORMAT_PPROF;
    assert_int_equal(hscope_heap_write_pprof(NULL, t, &o, collect, &s, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_heap_write_pprof(h, t, &o, NULL, &s, &err), HSCOPE_ERR_INVALID_ARG);
    sink f = { 0 };
    f.fail_after = 1;
    hscope_error_init(&err);
    assert_int_equal(hscope_heap_write_pprof(h, t, &o, collect, &f, &err), HSCOPE_ERR_IO);
    free(f.p);
    hscope_heap_free(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_tally_text_width),
        cmocka_unit_test(test_tally_warnings_and_dumper),
        cmocka_unit_test(test_formats_and_damage_text),
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_generations),
        cmocka_unit_test(test_generations_dumper),
        cmocka_unit_test(test_dominators),
        cmocka_unit_test(test_dominators_top_ties),
        cmocka_unit_test(test_folded_and_retained),
        cmocka_unit_test(test_domtree_tally),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_diff_and_suspects),
        cmocka_unit_test(test_suspects_root_holder),
        cmocka_unit_test(test_options_and_sink),
        cmocka_unit_test(test_heapsnapshot),
        cmocka_unit_test(test_pprof),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
