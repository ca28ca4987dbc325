/*
 * test_html.c - the HTML report through the public header
 * (hscope_html_report_*, hscope_report_html): a leak planted in three small
 * hand-written dumps is found in the diff and suspects sections, a planted
 * duplicate string in the waste section, with the numbers computed by hand
 * below; a failing sink stops the writer with HSCOPE_ERR_IO; options and
 * arguments are checked.
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

#include "api_sink.h"

/*
 * Three dumps of one "process".  A: the holder 0x1000 (an Array at
 * app/cache.rb:4, held by the vm root) and an unrelated String 0x9000.
 * B: the holder now references five Strings 0x5000..0x5100 born at
 * app/leak.rb:7 (40 bytes each, distinct values), and a transient String
 * 0x8000.  C: as B without 0x8000, plus four copies of one 13-byte value
 * at app/dup.rb:3 (40 bytes each), held by the vm root.
 *
 * Expected: leaked (new in B, alive in C) = the five Strings: 5 objects,
 * 200 bytes; their one holder is 0x1000 (5 objects, 200 bytes).  Waste of
 * C: the duplicate at app/dup.rb:3, 4 copies of which 3 would go, saving
 * 3 x 40 = 120 bytes, memsize 160.
 */
#define CLASSES                                                                          \
    "{\"address\":\"0x6100\",\"type\":\"CLASS\",\"name\":\"Array\",\"memsize\":100}\n"     \
    "{\"address\":\"0x6000\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n"    \
    "{\"address\":\"0x9000\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40,"       \
    "\"bytesize\":5,\"value\":\"other\",\"file\":\"app/other.rb\",\"line\":1}\n"
#define LEAKED(a, v)                                                                     \
    "{\"address\":\"" a "\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40,"        \
    "\"bytesize\":2,\"value\":\"" v "\",\"file\":\"app/leak.rb\",\"line\":7}\n"
#define LEAKS LEAKED("0x5000", "x1") LEAKED("0x5040", "x2") LEAKED("0x5080", "x3")       \
    LEAKED("0x50c0", "x4") LEAKED("0x5100", "x5")
#define HOLDER_FULL                                                                      \
    "{\"address\":\"0x1000\",\"type\":\"ARRAY\",\"class\":\"0x6100\",\"length\":5,"        \
    "\"references\":[\"0x5000\",\"0x5040\",\"0x5080\",\"0x50c0\",\"0x5100\"],"            \
    "\"memsize\":40,\"file\":\"app/cache.rb\",\"line\":4}\n"
#define DUP(a)                                                                           \
    "{\"address\":\"" a "\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40,"        \
    "\"bytesize\":13,\"value\":\"dup-value-XYZ\",\"file\":\"app/dup.rb\",\"line\":3}\n"

static const char dump_a[] =
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x1000\",\"0x9000\"]}\n" CLASSES
    "{\"address\":\"0x1000\",\"type\":\"ARRAY\",\"class\":\"0x6100\",\"length\":0,"
    "\"memsize\":40,\"file\":\"app/cache.rb\",\"line\":4}\n";
static const char dump_b[] =
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x1000\",\"0x9000\",\"0x8000\"]}\n"
    CLASSES HOLDER_FULL LEAKS
    "{\"address\":\"0x8000\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":40,"
    "\"bytesize\":3,\"value\":\"tmp\",\"file\":\"app/tmp.rb\",\"line\":1}\n";
static const char dump_c[] =
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x1000\",\"0x9000\",\"0x7000\","
    "\"0x7040\",\"0x7080\",\"0x70c0\"]}\n" CLASSES HOLDER_FULL LEAKS
    DUP("0x7000") DUP("0x7040") DUP("0x7080") DUP("0x70c0");

static char dir[64];
static char paths[3][96];

static int
setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/hs-html-XXXXXX");
    assert_non_null(mkdtemp(dir));
    const char *texts[3] = { dump_a, dump_b, dump_c };
    for (int i = 0; i < 3; i++) {
        snprintf(paths[i], sizeof(paths[i]), "%s/heap_%c.json", dir, 'a' + i);
        FILE *f = fopen(paths[i], "w");
        assert_non_null(f);
        fputs(texts[i], f);
        assert_int_equal(fclose(f), 0);
    }
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        unlink(paths[i]);
    rmdir(dir);
    return 0;
}

/* The text of the element that starts with `start`, up to `end`. */
static char *
slice(const char *s, const char *start, const char *end)
{
    const char *a = strstr(s, start);
    assert_non_null(a);
    const char *b = strstr(a, end);
    assert_non_null(b);
    return strndup(a, (size_t)(b - a));
}

static sink
report(const char *const *p, uint64_t n, const hscope_html_options *ho)
{
    sink s = { NULL, 0, 0, 0, 0 };
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_HTML;
    hscope_status st = hscope_report_html(p, n, NULL, ho, &ro, collect, &s, &err);
    if (st != HSCOPE_OK)
        fail_msg("hscope_report_html: %s", err.message);
    return s;
}

static void
test_leak_hunt(void **state)
{
    (void)state;
    const char *p[3] = { paths[0], paths[1], paths[2] };
    sink s = report(p, 3, NULL);
    /* the diff: 5 objects, 200 bytes, one group app/leak.rb:7:String */
    assert_non_null(strstr(s.p, "id=\"leaked-count\" data-v=\"5\">5<"));
    assert_non_null(strstr(s.p, "id=\"leaked-memsize\" data-v=\"200\">200 B<"));
    char *diff = slice(s.p, "<section id=\"diff\">", "</section>");
    assert_non_null(strstr(diff, "<td class=\"key mono\">app/leak.rb:7:String</td>"
                                 "<td class=\"n\" data-v=\"5\">5</td>"));
    free(diff);
    /* the suspects: the holder first, holding 5 objects and 200 bytes */
    char *sus = slice(s.p, "<tr id=\"suspect-1\"", "</tr>");
    assert_non_null(strstr(sus, "data-addr=\"0x1000\""));
    assert_non_null(strstr(sus, "<td class=\"key mono\">app/cache.rb:4</td>"
                                "<td class=\"n\" data-v=\"5\">5</td>"
                                "<td class=\"n\" data-v=\"200\">200 B</td>"));
    assert_non_null(strstr(sus, "root vm"));
    /* what put them there: the 5 Strings of app/leak.rb:7, all directly in it */
    assert_non_null(strstr(sus, "<td class=\"cause\"><ul class=\"sites\"><li><span "
                                "class=\"mono\">app/leak.rb:7:String</span>: 5 objects, 200 B; "
                                "<b>5 put in it</b>, keeping 5 objects (200 B)</li></ul></td>"));
    free(sus);
    assert_null(strstr(s.p, "id=\"suspect-2\""));
    /* the waste of C: the planted duplicate, 3 copies would go, 120 bytes */
    char *w = slice(s.p, "<section id=\"waste\">", "</section>");
    assert_non_null(strstr(w, "<td class=\"key mono\">app/dup.rb:3</td><td>duplicate STRING</td>"
                              "<td class=\"n\" data-v=\"3\">3</td>"
                              "<td class=\"n\" data-v=\"120\">120 B</td>"
                              "<td class=\"n\" data-v=\"160\">160 B</td>"));
    /* the value as its length and hash, never itself */
    assert_non_null(strstr(w, "<td class=\"mono\">13 B #"));
    free(w);
    assert_null(strstr(s.p, "dup-value-XYZ"));
    assert_null(strstr(s.p, "\"x1\""));
    /* sections and the page's end */
    assert_non_null(strstr(s.p, "<section id=\"timeline\">"));
    assert_non_null(strstr(s.p, "<section id=\"suspects\">"));
    assert_non_null(strstr(s.p, "<title>heapscope report: heap_c.json (+2)</title>"));
    assert_true(s.len > 20 && strcmp(s.p + s.len - 8, "</html>\n") == 0);
    free(s.p);
}

/*
 * A series whose timeline rows depend on every rule a fold applies: class
 * records after the objects that use them, an object of a class not in
 * the dump, IMEMOs (labelled by imemo_type), the dumper's own objects
 * (objspace.rb, left out unless kept) and Ruby's allocation tracer (left
 * out unless kept).  Each dump grows the leak at app/s.rb:2 by 4 objects.
 */
static void
write_series_dump(const char *path, int k)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x1000\"]}\n", f);
    for (int i = 0; i < 4 * k; i++)
        fprintf(f, "{\"address\":\"0x%x\",\"type\":\"STRING\",\"class\":\"0x6000\","
                   "\"memsize\":%d,\"file\":\"app/s.rb\",\"line\":2,\"generation\":%d}\n",
                0x10000 + 0x40 * i, 40 + i, 5 + i);
    fprintf(f, "{\"address\":\"0x2000\",\"type\":\"OBJECT\",\"class\":\"0x6abc\",\"memsize\":%d}\n",
            24 * k);
    fprintf(f, "{\"address\":\"0x2100\",\"type\":\"IMEMO\",\"imemo_type\":\"ment\","
               "\"memsize\":%d}\n", 56 + k);
    fprintf(f, "{\"address\":\"0x2200\",\"type\":\"STRING\",\"class\":\"0x6000\",\"memsize\":%d,"
               "\"file\":\"/usr/lib/ruby/3.1.0/objspace.rb\",\"line\":94,\"method\":\"dump_all\"}\n",
            4000 * k);
    fprintf(f, "{\"address\":\"0x2300\",\"type\":\"DATA\",\"class\":\"0x6100\","
               "\"struct\":\"ObjectTracing/allocation_info_tracer\",\"memsize\":%d}\n", 90000 * k);
    fputs("{\"address\":\"0x1000\",\"type\":\"ARRAY\",\"class\":\"0x6100\",\"memsize\":40,"
          "\"file\":\"app/cache.rb\",\"line\":4}\n"
          "{\"address\":\"0x6100\",\"type\":\"CLASS\",\"name\":\"Array\",\"memsize\":100}\n"
          "{\"address\":\"0x6000\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n", f);
    assert_int_equal(fclose(f), 0);
}

/* Timeline handles a and b hold the same dumps, totals, groups, series,
 * verdicts and warnings. */
static void
assert_same_timeline(const hscope_timeline_t *a, const hscope_timeline_t *b)
{
    uint64_t nd = hscope_timeline_dump_count(a);
    assert_int_equal(nd, hscope_timeline_dump_count(b));
    assert_string_equal(hscope_timeline_by(a), hscope_timeline_by(b));
    for (uint64_t i = 0; i < nd; i++) {
        assert_string_equal(hscope_timeline_dump_path(a, i), hscope_timeline_dump_path(b, i));
        uint64_t ca, ma, cb, mb, oa, oma, ob, omb;
        assert_int_equal(hscope_timeline_dump_totals(a, i, &ca, &ma), HSCOPE_OK);
        assert_int_equal(hscope_timeline_dump_totals(b, i, &cb, &mb), HSCOPE_OK);
        assert_int_equal(ca, cb);
        assert_int_equal(ma, mb);
        assert_int_equal(hscope_timeline_dump_excluded(a, i), hscope_timeline_dump_excluded(b, i));
        hscope_timeline_dump_excluded_tracer(a, i, &oa, &oma);
        hscope_timeline_dump_excluded_tracer(b, i, &ob, &omb);
        assert_int_equal(oa, ob);
        assert_int_equal(oma, omb);
        hscope_load_stats sa, sb;
        sa.size = sb.size = sizeof(sa);
        assert_int_equal(hscope_timeline_dump_stats(a, i, &sa), HSCOPE_OK);
        assert_int_equal(hscope_timeline_dump_stats(b, i, &sb), HSCOPE_OK);
        assert_int_equal(sa.objects, sb.objects);
        assert_int_equal(sa.root_records, sb.root_records);
        assert_int_equal(sa.skipped_lines, sb.skipped_lines);
    }
    uint64_t ng = hscope_timeline_group_count(a);
    assert_int_equal(ng, hscope_timeline_group_count(b));
    assert_int_equal(hscope_timeline_growing_count(a), hscope_timeline_growing_count(b));
    for (uint64_t g = 0; g < ng; g++) {
        assert_string_equal(hscope_timeline_group_key(a, g), hscope_timeline_group_key(b, g));
        assert_memory_equal(hscope_timeline_group_series(a, g, HSCOPE_METRIC_COUNT),
                            hscope_timeline_group_series(b, g, HSCOPE_METRIC_COUNT), nd * 8);
        assert_memory_equal(hscope_timeline_group_series(a, g, HSCOPE_METRIC_MEMSIZE),
                            hscope_timeline_group_series(b, g, HSCOPE_METRIC_MEMSIZE), nd * 8);
        assert_int_equal(hscope_timeline_group_growing(a, g), hscope_timeline_group_growing(b, g));
    }
    assert_int_equal(hscope_timeline_warnings(a), hscope_timeline_warnings(b));
    assert_string_equal(hscope_timeline_warning_text(a), hscope_timeline_warning_text(b));
}

/* The report of 2-3 dumps makes its timeline from the diff's reads (folds
 * riding the passes over the earlier dumps, the last dump's loaded heap):
 * the same timeline as folding every dump, by each key and flag. */
static void
test_timeline_from_diff(void **state)
{
    (void)state;
    char sp[3][128];
    for (int i = 0; i < 3; i++) {
        snprintf(sp[i], sizeof(sp[i]), "%s/series_%d.json", dir, i + 1);
        write_series_dump(sp[i], i + 1);
    }
    const char *p[3] = { sp[0], sp[1], sp[2] };
    static const char *const keys[] = { NULL, "file:line:class", "type", "gem", "generation" };
    static const uint32_t flags[] = { 0, HSCOPE_HTML_KEEP_DUMPER, HSCOPE_HTML_KEEP_TRACER,
                                      HSCOPE_HTML_KEEP_DUMPER | HSCOPE_HTML_KEEP_TRACER };
    int checked_tracer = 0;
    for (uint64_t n = 2; n <= 3; n++)
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            for (size_t fl = 0; fl < 4; fl++) {
                hscope_html_options ho;
                hscope_html_options_init(&ho);
                ho.by = keys[k];
                ho.flags = flags[fl] | HSCOPE_HTML_NO_WASTE;
                hscope_html_report_t *r = NULL;
                hscope_error err = HSCOPE_ERROR_INIT;
                assert_int_equal(hscope_html_report_compute(&r, p, n, NULL, &ho, &err), HSCOPE_OK);
                hscope_timeline_options to;
                hscope_timeline_options_init(&to);
                to.by = keys[k] ? keys[k] : "class";
                to.flags = (flags[fl] & HSCOPE_HTML_KEEP_DUMPER ? HSCOPE_TIMELINE_KEEP_DUMPER : 0) |
                           (flags[fl] & HSCOPE_HTML_KEEP_TRACER ? HSCOPE_TIMELINE_KEEP_TRACER : 0);
                hscope_timeline_t *tl = NULL;
                assert_int_equal(hscope_timeline_compute(&tl, p, n, NULL, &to, &err), HSCOPE_OK);
                const hscope_timeline_t *got = hscope_html_report_timeline(r);
                assert_non_null(got);
                assert_same_timeline(got, tl);
                /* the rules were in play: the dumper's object left out
                 * unless kept, the tracer likewise */
                uint64_t o, om;
                hscope_timeline_dump_excluded_tracer(got, n - 1, &o, &om);
                assert_int_equal(o, flags[fl] & HSCOPE_HTML_KEEP_TRACER ? 0 : 1);
                assert_int_equal(hscope_timeline_dump_excluded(got, n - 1),
                                 flags[fl] & HSCOPE_HTML_KEEP_DUMPER ? 0 : 1);
                checked_tracer += o == 1;
                hscope_timeline_free(tl);
                hscope_html_report_free(r);
            }
    assert_int_equal(checked_tracer, 2 * 5 * 2);
    for (int i = 0; i < 3; i++)
        unlink(sp[i]);
}

static void
test_one_dump_handle(void **state)
{
    (void)state;
    const char *p[1] = { paths[2] };
    hscope_html_report_t *r = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_html_options ho;
    hscope_html_options_init(&ho);
    ho.title = "<my> report";
    assert_int_equal(hscope_html_report_compute(&r, p, 1, NULL, &ho, &err), HSCOPE_OK);
    assert_null(hscope_html_report_diff(r));
    assert_null(hscope_html_report_timeline(r));
    assert_non_null(hscope_html_report_waste(r));
    /* 2 classes, 0x9000, the holder, 5 leaked, 4 copies: 13 */
    assert_int_equal(hscope_heap_object_count(hscope_html_report_heap(r)), 13);
    sink s = { NULL, 0, 0, 0, 0 };
    assert_int_equal(hscope_html_report_write(r, NULL, collect, &s, &err), HSCOPE_OK);
    assert_non_null(strstr(s.p, "<title>&lt;my&gt; report</title>"));
    assert_non_null(strstr(s.p, "id=\"sum-objects\" data-v=\"13\""));
    /* sites: the four copies (160 bytes) */
    assert_non_null(strstr(s.p, "<td class=\"key mono\">app/dup.rb:3:String</td>"
                                "<td class=\"n\" data-v=\"4\">4</td>"));
    assert_null(strstr(s.p, "id=\"diff\""));
    /* top 1: one row per table */
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.top = 1;
    sink t = { NULL, 0, 0, 0, 0 };
    assert_int_equal(hscope_html_report_write(r, &ro, collect, &t, &err), HSCOPE_OK);
    char *w = slice(t.p, "<table class=\"sortable\" id=\"waste-table\">", "</table>");
    assert_non_null(strstr(w, "data-v=\"1\">1</td>"));
    assert_null(strstr(w, "data-v=\"2\">2</td>"));
    free(w);
    free(s.p);
    free(t.p);
    hscope_html_report_free(r);
}

static void
test_failing_sink(void **state)
{
    (void)state;
    const char *p[1] = { paths[2] };
    hscope_html_report_t *r = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_html_report_compute(&r, p, 1, NULL, NULL, &err), HSCOPE_OK);
    for (int k = 1; k <= 3; k++) {
        sink s = { NULL, 0, 0, 0, k };
        hscope_error e = HSCOPE_ERROR_INIT;
        assert_int_equal(hscope_html_report_write(r, NULL, collect, &s, &e), HSCOPE_ERR_IO);
        assert_int_equal(e.status, HSCOPE_ERR_IO);
        assert_int_equal(s.calls, k); /* not called again after it failed */
        free(s.p);
    }
    hscope_html_report_free(r);
    /* the one-call form: the same */
    sink s = { NULL, 0, 0, 0, 1 };
    hscope_error e = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_report_html(p, 1, NULL, NULL, NULL, collect, &s, &e), HSCOPE_ERR_IO);
    assert_int_equal(s.calls, 1);
}

static void
test_arguments(void **state)
{
    (void)state;
    const char *p[2] = { paths[2], "/nonexistent/heap.json" };
    sink s = { NULL, 0, 0, 0, 0 };
    hscope_error err = HSCOPE_ERROR_INIT;
    /* a missing dump: an error, nothing written */
    assert_int_not_equal(hscope_report_html(p + 1, 1, NULL, NULL, NULL, collect, &s, &err),
                         HSCOPE_OK);
    assert_non_null(strstr(err.message, "/nonexistent/heap.json"));
    assert_int_equal(s.calls, 0);
    hscope_html_report_t *r = NULL;
    hscope_error e1 = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_html_report_compute(&r, p, 0, NULL, NULL, &e1),
                     HSCOPE_ERR_INVALID_ARG);
    assert_null(r);
    hscope_html_options ho = HSCOPE_HTML_OPTIONS_INIT;
    ho.flags = 0x80;
    hscope_error e2 = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_html_report_compute(&r, p, 1, NULL, &ho, &e2), HSCOPE_ERR_UNSUPPORTED);
    ho.flags = 0;
    ho.by = "colour";
    hscope_error e3 = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_html_report_compute(&r, p, 1, NULL, &ho, &e3), HSCOPE_ERR_UNSUPPORTED);
    ho.by = NULL;
    ho.size = 0;
    hscope_error e4 = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_html_report_compute(&r, p, 1, NULL, &ho, &e4), HSCOPE_ERR_INVALID_ARG);
    /* no waste: no section, no waste handle */
    hscope_html_options_init(&ho);
    ho.flags = HSCOPE_HTML_NO_WASTE;
    hscope_error e5 = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_html_report_compute(&r, p, 1, NULL, &ho, &e5), HSCOPE_OK);
    assert_null(hscope_html_report_waste(r));
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_JSON;
    hscope_error e6 = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_html_report_write(r, &ro, collect, &s, &e6), HSCOPE_ERR_UNSUPPORTED);
    hscope_error e7 = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_html_report_write(r, NULL, NULL, NULL, &e7), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(s.calls, 0);
    assert_int_equal(hscope_html_report_write(r, NULL, collect, &s, &e7), HSCOPE_OK);
    assert_null(strstr(s.p, "id=\"waste\""));
    assert_null(strstr(s.p, "href=\"#waste\""));
    free(s.p);
    hscope_html_report_free(r);
    hscope_html_report_free(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leak_hunt),
        cmocka_unit_test(test_one_dump_handle),
        cmocka_unit_test(test_timeline_from_diff),
        cmocka_unit_test(test_failing_sink),
        cmocka_unit_test(test_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
