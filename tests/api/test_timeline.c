/*
 * test_timeline.c - "memory over time" through the public header only:
 * the timeline handle (dump ordering rules, the least-squares fit against
 * series computed here by hand, the growing verdict and ranking, the
 * "grew" view, warnings, writers) and export.  Every dump is written here
 * with known counts per type, so every expectation is exact.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

#include "api_sink.h"

/* ------------------------------------------------------------------ */
/* dumps with known contents                                           */
/* ------------------------------------------------------------------ */

static char tmpdir[512];

static void
make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/hscope-tl-XXXXXX", base ? base : "/tmp");
    assert_non_null(mkdtemp(tmpdir));
}

/* A dump of `strings` STRINGs (memsize 40), `arrays` ARRAYs (memsize 80)
 * and `hashes` HASHes (memsize 200), at addresses starting at `base`. */
static char *
write_dump(const char *name, unsigned strings, unsigned arrays, unsigned hashes, unsigned base)
{
    char *path = NULL;
    assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x%x\"]}\n", base);
    unsigned a = base;
    for (unsigned i = 0; i < strings; i++, a += 0x28)
        fprintf(f, "{\"address\":\"0x%x\",\"type\":\"STRING\",\"memsize\":40}\n", a);
    for (unsigned i = 0; i < arrays; i++, a += 0x28)
        fprintf(f, "{\"address\":\"0x%x\",\"type\":\"ARRAY\",\"memsize\":80}\n", a);
    for (unsigned i = 0; i < hashes; i++, a += 0x28)
        fprintf(f, "{\"address\":\"0x%x\",\"type\":\"HASH\",\"memsize\":200}\n", a);
    assert_int_equal(fclose(f), 0);
    return path;
}

static void
set_mtime(const char *path, long sec)
{
    struct timeval tv[2] = { { sec, 0 }, { sec, 0 } };
    assert_int_equal(utimes(path, tv), 0);
}

static hscope_timeline_t *
timeline(char **paths, uint64_t n, const char *by, int32_t metric, int32_t order, uint32_t flags)
{
    hscope_timeline_options o = HSCOPE_TIMELINE_OPTIONS_INIT;
    o.by = by;
    o.metric = metric;
    o.order = order;
    o.flags = flags;
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_timeline_compute(&tl, (const char *const *)paths, n, NULL, &o, &err);
    if (st != HSCOPE_OK)
        fprintf(stderr, "timeline: %s\n", err.message);
    assert_int_equal(st, HSCOPE_OK);
    return tl;
}

/* The group with this key, or -1. */
static int64_t
group(const hscope_timeline_t *tl, const char *key)
{
    for (uint64_t g = 0; g < hscope_timeline_group_count(tl); g++)
        if (strcmp(hscope_timeline_group_key(tl, g), key) == 0)
            return (int64_t)g;
    return -1;
}

static void
free_paths(char **p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unlink(p[i]);
        free(p[i]);
    }
}

static char *
write_as(const hscope_timeline_t *tl, int32_t format, uint64_t top)
{
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = format;
    ro.top = top;
    ro.flags = HSCOPE_REPORT_ASCII;
    sink s = { 0 };
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_timeline_write(tl, &ro, collect, &s, &err), HSCOPE_OK);
    assert_non_null(s.p);
    return s.p;
}

/* ------------------------------------------------------------------ */
/* the fit and the verdict                                             */
/* ------------------------------------------------------------------ */

/*
 * Four dumps, 30 minutes apart (epochs in the names), given in reverse:
 *   STRING  10 20 30 40   slope 10/step, R^2 1, mean 25, rise 30: growing
 *   ARRAY    5  5  5  5   flat: slope 0, R^2 0 (constant), not growing
 *   HASH    10 30 10 30   x 0..3: sxy 20, sxx 5, syy 400: slope 4, R^2 0.2
 * Per hour (x = 0, .5, 1, 1.5): STRING 20/hour.
 */
static void
test_fit_and_verdict(void **state)
{
    (void)state;
    make_tmpdir();
    static const unsigned s[4] = { 10, 20, 30, 40 }, h[4] = { 10, 30, 10, 30 };
    char *paths[4];
    for (int k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof(name), "app-%d.json", 1700000000 + 1800 * (3 - k));
        paths[k] = write_dump(name, s[3 - k], 5, h[3 - k], 0x1000);
        set_mtime(paths[k], 1700000000L + 1800 * (3 - k)); /* else: "out of order" */
    }
    hscope_timeline_t *tl = timeline(paths, 4, "type", HSCOPE_METRIC_COUNT, 0, 0);
    assert_string_equal(hscope_timeline_by(tl), "type");
    assert_int_equal(hscope_timeline_metric(tl), HSCOPE_METRIC_COUNT);
    assert_string_equal(hscope_timeline_order(tl), "name-time");
    assert_string_equal(hscope_timeline_order_source(tl), "epoch");
    assert_int_equal(hscope_timeline_times_known(tl), 1);
    assert_int_equal(hscope_timeline_dump_count(tl), 4);
    for (uint64_t i = 0; i < 4; i++) {
        assert_int_equal(hscope_timeline_dump_given(tl, i), 3 - i);
        assert_string_equal(hscope_timeline_dump_path(tl, i), paths[3 - i]);
        assert_int_equal(hscope_timeline_dump_time_ms(tl, i), (1700000000LL + 1800 * (int64_t)i) * 1000);
        uint64_t c = 0, m = 0;
        assert_int_equal(hscope_timeline_dump_totals(tl, i, &c, &m), HSCOPE_OK);
        assert_int_equal(c, s[i] + 5 + h[i]);
        assert_int_equal(m, 40 * s[i] + 80 * 5 + 200 * h[i]);
    }
    assert_int_equal(hscope_timeline_group_count(tl), 3);
    assert_int_equal(hscope_timeline_growing_count(tl), 1);
    /* ranked: the growing group first */
    assert_string_equal(hscope_timeline_group_key(tl, 0), "STRING");
    int64_t slope, hour, r2, mean, rise;
    assert_int_equal(hscope_timeline_group_fit(tl, 0, &slope, &hour, &r2, &mean, &rise), HSCOPE_OK);
    assert_int_equal(slope, 10000);
    assert_int_equal(hour, 20000);
    assert_int_equal(r2, 1000000);
    assert_int_equal(mean, 25000);
    assert_int_equal(rise, 30000);
    assert_int_equal(hscope_timeline_group_growing(tl, 0), 1);
    const uint64_t *cs = hscope_timeline_group_series(tl, 0, HSCOPE_METRIC_COUNT);
    const uint64_t *ms = hscope_timeline_group_series(tl, 0, HSCOPE_METRIC_MEMSIZE);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(cs[i], s[i]);
        assert_int_equal(ms[i], 40 * s[i]);
    }
    int64_t g = group(tl, "HASH");
    assert_true(g > 0);
    assert_int_equal(hscope_timeline_group_fit(tl, (uint64_t)g, &slope, NULL, &r2, NULL, NULL),
                     HSCOPE_OK);
    assert_int_equal(slope, 4000);
    assert_int_equal(r2, 200000);
    assert_int_equal(hscope_timeline_group_growing(tl, (uint64_t)g), 0);
    g = group(tl, "ARRAY");
    assert_int_equal(hscope_timeline_group_fit(tl, (uint64_t)g, &slope, NULL, &r2, &mean, NULL),
                     HSCOPE_OK);
    assert_int_equal(slope, 0);
    assert_int_equal(r2, 0);
    assert_int_equal(mean, 5000);
    assert_int_equal(hscope_timeline_group_growing(tl, (uint64_t)g), 0);
    /* out of range */
    assert_int_equal(hscope_timeline_group_fit(tl, 3, &slope, NULL, NULL, NULL, NULL),
                     HSCOPE_ERR_NOT_FOUND);
    assert_null(hscope_timeline_group_key(tl, 3));
    assert_null(hscope_timeline_group_series(tl, 0, 7));
    assert_int_equal(hscope_timeline_dump_time_ms(tl, 4), HSCOPE_NO_VALUE);
    assert_string_equal(hscope_timeline_warning_text(tl), "");
    hscope_timeline_free(tl);

    /* memsize: STRING 400..1600 bytes rises 1200, under the 4 KB floor, but
     * its count rises 30 objects with R^2 1: the verdict judges both series,
     * so ranking by memsize does not hide it; HASH 2000 6000 2000 6000 and
     * 10 30 10 30 objects: R^2 0.2 on both, not growing */
    tl = timeline(paths, 4, "type", 0, 0, 0);
    assert_int_equal(hscope_timeline_metric(tl), HSCOPE_METRIC_MEMSIZE);
    assert_int_equal(hscope_timeline_growing_count(tl), 1);
    assert_string_equal(hscope_timeline_group_key(tl, 0), "STRING");
    assert_int_equal(hscope_timeline_group_fit(tl, 0, &slope, NULL, NULL, NULL, &rise), HSCOPE_OK);
    assert_int_equal(slope, 400000);
    assert_int_equal(rise, 1200000);
    assert_int_equal(hscope_timeline_group_growing(tl, 0), 1);
    assert_int_equal(hscope_timeline_group_growing(tl, (uint64_t)group(tl, "HASH")), 0);
    hscope_timeline_free(tl);

    /* min_dumps 5: four dumps are not enough */
    hscope_timeline_options o = HSCOPE_TIMELINE_OPTIONS_INIT;
    o.by = "type";
    o.metric = HSCOPE_METRIC_COUNT;
    o.min_dumps = 5;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 4, NULL, &o, &err),
                     HSCOPE_OK);
    assert_int_equal(hscope_timeline_growing_count(tl), 0);
    hscope_timeline_free(tl);
    free_paths(paths, 4);
    rmdir(tmpdir);
}

/*
 * A steady small leak and noise, by hand (sequence numbers in the names):
 *   STRING  18 36 54        objects of 40 B: 720 1440 2160 B. Count: slope
 *                           18, R^2 1, rise 36 >= max(10, 2% of 36):
 *                           growing, whatever the metric (the memsize rise,
 *                           1440 B, is under the 4 KB floor)
 *   HASH    40 10 50 (200 B) up and down: count R^2 0.058, not growing
 * and, over five dumps, HASH 40 10 50 20 60 (R^2 0.145) is still not, nor
 * is ARRAY 100 101 102 103 104 (R^2 1, rise 4 objects, 320 B: under both
 * floors).
 */
static void
test_small_steady_leak(void **state)
{
    (void)state;
    make_tmpdir();
    static const unsigned s[5] = { 18, 36, 54, 72, 90 }, h[5] = { 40, 10, 50, 20, 60 };
    char *paths[5];
    for (int k = 0; k < 5; k++) {
        char name[64];
        snprintf(name, sizeof(name), "leak_%d.json", k + 1);
        paths[k] = write_dump(name, s[k], 100 + (unsigned)k, h[k], 0x1000);
    }
    for (int metric = 0; metric <= HSCOPE_METRIC_COUNT; metric++) {
        hscope_timeline_t *tl = timeline(paths, 3, "type", metric, 0, 0);
        assert_string_equal(hscope_timeline_order_source(tl), "sequence");
        assert_int_equal(hscope_timeline_growing_count(tl), 1);
        assert_string_equal(hscope_timeline_group_key(tl, 0), "STRING");
        assert_int_equal(hscope_timeline_group_growing(tl, 0), 1);
        assert_int_equal(hscope_timeline_group_growing(tl, (uint64_t)group(tl, "HASH")), 0);
        assert_int_equal(hscope_timeline_group_growing(tl, (uint64_t)group(tl, "ARRAY")), 0);
        /* the JSON states both floors */
        char *js = write_as(tl, HSCOPE_FORMAT_JSON, 0);
        assert_non_null(strstr(js, "\"min_rise_count\":10"));
        assert_non_null(strstr(js, "\"min_rise_memsize\":4096"));
        free(js);
        hscope_timeline_free(tl);
        tl = timeline(paths, 5, "type", metric, 0, 0);
        assert_int_equal(hscope_timeline_growing_count(tl), 1);
        assert_int_equal(hscope_timeline_group_growing(tl, (uint64_t)group(tl, "HASH")), 0);
        assert_int_equal(hscope_timeline_group_growing(tl, (uint64_t)group(tl, "ARRAY")), 0);
        hscope_timeline_free(tl);
    }
    /* the grew view (diff --grew) and the report share the rule and the
     * default metric: memsize */
    hscope_timeline_t *tl = timeline(paths, 3, "type", 0, 0, HSCOPE_TIMELINE_GREW);
    assert_int_equal(hscope_timeline_metric(tl), HSCOPE_METRIC_MEMSIZE);
    assert_int_equal(hscope_timeline_group_growing(tl, (uint64_t)group(tl, "STRING")), 1);
    hscope_timeline_free(tl);
    free_paths(paths, 5);
    rmdir(tmpdir);
}

/* Irregular times (hours 0, 1, 3, 4; mtimes, names without numbers):
 * STRING 10 20 30 40 -> slope per hour 70 / 10 = 7; and the rise floor:
 * 100 101 102 103 objects fit perfectly but rise 3 < 10: not growing. */
static void
test_irregular_times_and_floor(void **state)
{
    (void)state;
    make_tmpdir();
    static const char *const names[4] = { "delta.json", "alpha.json", "charlie.json", "bravo.json" };
    static const long hours[4] = { 0, 1, 3, 4 };
    char *paths[4];
    for (int k = 0; k < 4; k++) {
        paths[k] = write_dump(names[k], 10 * (unsigned)(k + 1), 100 + (unsigned)k, 0, 0x1000);
        set_mtime(paths[k], 1717000000L + 3600 * hours[k]);
    }
    /* given shuffled: mtime orders them back */
    char *shuffled[4] = { paths[2], paths[0], paths[3], paths[1] };
    hscope_timeline_t *tl = timeline(shuffled, 4, "type", HSCOPE_METRIC_COUNT, 0, 0);
    assert_string_equal(hscope_timeline_order(tl), "mtime");
    assert_string_equal(hscope_timeline_order_source(tl), "mtime");
    for (uint64_t i = 0; i < 4; i++)
        assert_string_equal(hscope_timeline_dump_path(tl, i), paths[i]);
    int64_t slope, hour, r2;
    uint64_t s = (uint64_t)group(tl, "STRING"), a = (uint64_t)group(tl, "ARRAY");
    assert_int_equal(hscope_timeline_group_fit(tl, s, &slope, &hour, NULL, NULL, NULL), HSCOPE_OK);
    assert_int_equal(slope, 10000);
    assert_int_equal(hour, 7000);
    assert_int_equal(hscope_timeline_group_growing(tl, s), 1);
    assert_int_equal(hscope_timeline_group_fit(tl, a, &slope, NULL, &r2, NULL, NULL), HSCOPE_OK);
    assert_int_equal(slope, 1000);
    assert_int_equal(r2, 1000000);
    assert_int_equal(hscope_timeline_group_growing(tl, a), 0);
    hscope_timeline_free(tl);

    /* equal mtimes: the order given */
    for (int k = 0; k < 4; k++)
        set_mtime(paths[k], 1717000000L);
    tl = timeline(shuffled, 4, "type", HSCOPE_METRIC_COUNT, 0, 0);
    assert_string_equal(hscope_timeline_order(tl), "given");
    assert_int_equal(hscope_timeline_times_known(tl), 0);
    for (uint64_t i = 0; i < 4; i++)
        assert_string_equal(hscope_timeline_dump_path(tl, i), shuffled[i]);
    assert_int_equal(hscope_timeline_group_fit(tl, 0, NULL, &hour, NULL, NULL, NULL), HSCOPE_OK);
    assert_int_equal(hour, HSCOPE_NO_VALUE);
    hscope_timeline_free(tl);

    /* a forced rule that cannot order them */
    hscope_timeline_options o = HSCOPE_TIMELINE_OPTIONS_INIT;
    o.order = HSCOPE_ORDER_NAME;
    hscope_error err = HSCOPE_ERROR_INIT;
    tl = (hscope_timeline_t *)&o; /* must be reset to NULL */
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 4, NULL, &o, &err),
                     HSCOPE_ERR_INVALID_ARG);
    assert_null(tl);
    assert_non_null(strstr(err.message, "order name"));
    o.order = HSCOPE_ORDER_MTIME;
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 4, NULL, &o, &err),
                     HSCOPE_ERR_INVALID_ARG);
    free_paths(paths, 4);
    rmdir(tmpdir);
}

/* The name rules, in order: datetime, then epoch, then sequence. */
static void
test_name_rules(void **state)
{
    (void)state;
    make_tmpdir();
    struct {
        const char *fmt[3];
        const char *source;
        int64_t t0_ms, step_ms;
    } cases[] = {
        { { "heap-2024-05-01T10:00:00.json", "heap-2024-05-01T12:00:00.json",
            "heap-2024-05-01T14:00:00.json" }, "datetime", 1714557600000LL, 7200000 },
        { { "h-20240501-100000.json.gz", "h-20240501-120000.json.gz", "h-20240501-140000.json.gz" },
          "datetime", 1714557600000LL, 7200000 },
        { { "hs_1700000000000.json", "hs_1700001800000.json", "hs_1700003600000.json" },
          "epoch-ms", 1700000000000LL, 1800000 },
        { { "heapscope.4242.3.json", "heapscope.4242.10.json", "heapscope.4242.200.json" },
          "sequence", HSCOPE_NO_VALUE, 0 },
        /* the same epoch in every name: not distinct, so the sequence after it */
        { { "heap-1700000000-2.json", "heap-1700000000-5.json", "heap-1700000000-9.json" },
          "sequence", HSCOPE_NO_VALUE, 0 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char *paths[3];
        for (int k = 0; k < 3; k++)
            paths[k] = write_dump(cases[c].fmt[k], 1 + (unsigned)k, 0, 0, 0x1000);
        char *rev[3] = { paths[2], paths[1], paths[0] };
        hscope_timeline_t *tl = timeline(rev, 3, NULL, 0, HSCOPE_ORDER_NAME, 0);
        assert_string_equal(hscope_timeline_by(tl), "file:line:class");
        assert_string_equal(hscope_timeline_order(tl), "name-time");
        assert_string_equal(hscope_timeline_order_source(tl), cases[c].source);
        for (uint64_t i = 0; i < 3; i++) {
            assert_string_equal(hscope_timeline_dump_path(tl, i), paths[i]);
            int64_t want = cases[c].t0_ms == HSCOPE_NO_VALUE
                               ? HSCOPE_NO_VALUE
                               : cases[c].t0_ms + (int64_t)i * cases[c].step_ms;
            assert_int_equal(hscope_timeline_dump_time_ms(tl, i), want);
        }
        hscope_timeline_free(tl);
        free_paths(paths, 3);
    }
    rmdir(tmpdir);
}

/* ------------------------------------------------------------------ */
/* the grew view, warnings, writers                                    */
/* ------------------------------------------------------------------ */

static void
test_grew(void **state)
{
    (void)state;
    make_tmpdir();
    /* counts in the order given: STRING 50 10 20 (change -30), ARRAY 1 2 9
     * (+8), HASH 3 3 3 (0); names with sequence numbers in another order */
    char *paths[3] = { write_dump("s_3.json", 50, 1, 3, 0x1000),
                       write_dump("s_1.json", 10, 2, 3, 0x1000),
                       write_dump("s_2.json", 20, 9, 3, 0x1000) };
    hscope_timeline_t *tl = timeline(paths, 3, "type", HSCOPE_METRIC_COUNT, HSCOPE_ORDER_AUTO,
                                     HSCOPE_TIMELINE_GREW);
    assert_string_equal(hscope_timeline_order(tl), "given");
    assert_string_equal(hscope_timeline_dump_path(tl, 0), paths[0]);
    assert_string_equal(hscope_timeline_group_key(tl, 0), "ARRAY");
    assert_string_equal(hscope_timeline_group_key(tl, 1), "HASH");
    assert_string_equal(hscope_timeline_group_key(tl, 2), "STRING");
    char *json = write_as(tl, HSCOPE_FORMAT_JSON, HSCOPE_TOP_ALL);
    assert_non_null(strstr(json, "{\"kind\":\"grew\","));
    assert_non_null(strstr(json, "{\"key\":\"ARRAY\",\"count\":[1,2,9],\"memsize\":[80,160,720],"
                                 "\"change\":8,\"deltas\":[1,7]}"));
    assert_non_null(strstr(json, "{\"key\":\"STRING\",\"count\":[50,10,20],"
                                 "\"memsize\":[2000,400,800],\"change\":-30,\"deltas\":[-40,10]}"));
    assert_null(strstr(json, "\"counts\""));
    free(json);
    char *text = write_as(tl, HSCOPE_FORMAT_TEXT, 0);
    /* the table: A B C, B-A, C-B */
    assert_non_null(strstr(text, "  ARRAY "));
    assert_non_null(strstr(text, "B-A"));
    assert_non_null(strstr(text, "C-B"));
    assert_non_null(strstr(text, "-40"));
    free(text);
    hscope_timeline_free(tl);
    /* the same dumps as a timeline: ordered by the sequence, s_1 first */
    tl = timeline(paths, 3, "type", HSCOPE_METRIC_COUNT, 0, 0);
    assert_string_equal(hscope_timeline_dump_path(tl, 0), paths[1]);
    json = write_as(tl, HSCOPE_FORMAT_JSON, 1);
    assert_non_null(strstr(json, "{\"kind\":\"timeline\","));
    assert_non_null(strstr(json, "\"group_count\":3,"));
    assert_non_null(strstr(json, "\"groups\":[{\"key\":\"STRING\",\"count\":[10,20,50],"));
    assert_null(strstr(json, "\"key\":\"ARRAY\""));  /* top 1 */
    free(json);
    char *csv = write_as(tl, HSCOPE_FORMAT_CSV, HSCOPE_TOP_ALL);
    assert_true(strncmp(csv, "rank,key,step,dump,time,count,memsize,growing\n", 46) == 0);
    size_t lines = 0;
    for (const char *p = csv; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1 + 3 * 3);
    free(csv);
    char *svg = write_as(tl, HSCOPE_FORMAT_SVG, 0);
    assert_true(strncmp(svg, "<?xml", 5) == 0);
    assert_non_null(strstr(svg, "</svg>\n"));
    free(svg);
    hscope_timeline_free(tl);
    free_paths(paths, 3);
    rmdir(tmpdir);
}

static void
test_warnings_and_errors(void **state)
{
    (void)state;
    make_tmpdir();
    char *a = write_dump("w_1.json", 10, 0, 0, 0x1000);
    char *b = write_dump("w_2.json", 20, 0, 0, 0x7f000000);
    /* a damaged dump: one line that is not JSON */
    char *c = write_dump("w_3.json", 30, 0, 0, 0x7f000000);
    FILE *f = fopen(c, "a");
    assert_non_null(f);
    fputs("{not json\n", f);
    fclose(f);
    char *paths[4] = { a, b, c, c };
    hscope_timeline_t *tl = timeline(paths, 4, "type", 0, HSCOPE_ORDER_GIVEN, 0);
    uint32_t w = hscope_timeline_warnings(tl);
    assert_true(w & HSCOPE_DIFF_WARN_SKIPPED);
    assert_true(w & HSCOPE_DIFF_WARN_DIFFERENT_PROCESS); /* a and b share no address */
    assert_true(w & HSCOPE_DIFF_WARN_REPEATED);          /* c twice */
    const char *code, *msg;
    int seen_rep = 0, seen_proc = 0;
    assert_int_equal(hscope_timeline_warning_count(tl), 2); /* the series checks */
    for (uint64_t i = 0; i < hscope_timeline_warning_count(tl); i++) {
        assert_int_equal(hscope_timeline_warning(tl, i, &code, &msg), HSCOPE_OK);
        seen_rep += strcmp(code, "repeated") == 0 && strstr(msg, "same file");
        seen_proc += strcmp(code, "different_process") == 0;
    }
    assert_int_equal(seen_rep, 1);
    assert_int_equal(seen_proc, 1);
    /* the writers say the damage too: once for each fold of c */
    char *json = write_as(tl, HSCOPE_FORMAT_JSON, 0), *want = NULL;
    assert_true(asprintf(&want, "{\"code\":\"skipped_lines\",\"message\":\"%s: 1 of 32 lines "
                                "skipped (bad_json 1)\"}", c) > 0);
    char *first = strstr(json, want);
    assert_non_null(first);
    assert_non_null(strstr(first + 1, want));
    assert_non_null(strstr(json, "\"code\":\"repeated\""));
    free(want);
    free(json);
    char *text = write_as(tl, HSCOPE_FORMAT_TEXT, 0);
    assert_true(strncmp(text, "warning: ", 9) == 0); /* text: the warnings first */
    free(text);
    assert_int_equal(hscope_timeline_warning(tl, 99, &code, &msg), HSCOPE_ERR_NOT_FOUND);
    assert_non_null(strstr(hscope_timeline_warning_text(tl), "different processes"));
    hscope_load_stats st = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_timeline_dump_stats(tl, 2, &st), HSCOPE_OK);
    assert_int_equal(st.skipped_lines, 1);
    assert_int_equal(hscope_timeline_dump_skipped(tl, 2, HSCOPE_SKIP_BAD_JSON), 1);

    /* a sink that fails: HSCOPE_ERR_IO */
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_JSON;
    sink s = { .fail_after = 1 };
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_timeline_write(tl, &ro, collect, &s, &err), HSCOPE_ERR_IO);
    ro.format = HSCOPE_FORMAT_DOT;
    assert_int_equal(hscope_timeline_write(tl, &ro, collect, &s, &err), HSCOPE_ERR_UNSUPPORTED);
    free(s.p);
    hscope_timeline_free(tl);

    /* a missing dump: the error names it */
    char *missing = NULL;
    assert_true(asprintf(&missing, "%s/no-such.json", tmpdir) > 0);
    char *bad[2] = { a, missing };
    hscope_error_init(&err);
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)bad, 2, NULL, NULL, &err),
                     HSCOPE_ERR_IO);
    assert_null(tl);
    assert_non_null(strstr(err.message, missing));
    /* bad arguments and options */
    hscope_timeline_options o = HSCOPE_TIMELINE_OPTIONS_INIT;
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 0, NULL, NULL, &err),
                     HSCOPE_ERR_INVALID_ARG);
    o.by = "nope";
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 1, NULL, &o, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    o.by = NULL;
    o.flags = 0x80;
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 1, NULL, &o, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    o.flags = 0;
    o.min_dumps = 1;
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 1, NULL, &o, &err),
                     HSCOPE_ERR_INVALID_ARG);
    o.min_dumps = 0;
    o.size = 0;
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 1, NULL, &o, &err),
                     HSCOPE_ERR_INVALID_ARG);
    assert_null(tl);
    free(missing);
    unlink(a), unlink(b), unlink(c);
    free(a), free(b), free(c);
    rmdir(tmpdir);
}

/* ------------------------------------------------------------------ */
/* allocation: through the caller's hooks, every failure clean          */
/* ------------------------------------------------------------------ */

typedef struct counting {
    long live, calls, fail_at;
} counting;

static void *
c_malloc(void *ud, size_t n)
{
    counting *c = ud;
    if (c->fail_at && ++c->calls == c->fail_at)
        return NULL;
    void *p = malloc(n);
    c->live += p != NULL;
    return p;
}

static void *
c_realloc(void *ud, void *p, size_t n)
{
    counting *c = ud;
    if (c->fail_at && ++c->calls == c->fail_at)
        return NULL;
    void *q = realloc(p, n);
    c->live += q && !p;
    return q;
}

static void
c_free(void *ud, void *p)
{
    counting *c = ud;
    c->live -= p != NULL;
    free(p);
}

static void
test_allocation_failures(void **state)
{
    (void)state;
    make_tmpdir();
    char *paths[3] = { write_dump("f_1.json", 10, 3, 1, 0x1000),
                       write_dump("f_2.json", 20, 3, 1, 0x1000),
                       write_dump("f_3.json", 30, 3, 1, 0x1000) };
    counting c = { 0, 0, 0 };
    hscope_allocator al = { sizeof(al), 0, c_malloc, c_realloc, c_free, &c };
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.allocator = &al;
    lo.threads = 1;
    hscope_timeline_options o = HSCOPE_TIMELINE_OPTIONS_INIT;
    o.threads = 1; /* one fold at a time, one parser thread: the n-th
                      allocation is the same in every run */
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 3, &lo, &o, &err),
                     HSCOPE_OK);
    assert_true(c.live > 0); /* the handle's memory came from the hooks */
    hscope_timeline_free(tl);
    assert_int_equal(c.live, 0);
    int failed = 0;
    for (long k = 1; k < 2000; k++) {
        c = (counting){ 0, 0, k };
        tl = NULL;
        hscope_error_init(&err);
        hscope_status st = hscope_timeline_compute(&tl, (const char *const *)paths, 3, &lo, &o, &err);
        if (st == HSCOPE_OK) {
            hscope_timeline_free(tl);
            assert_int_equal(c.live, 0);
            break;
        }
        assert_int_equal(st, HSCOPE_ERR_NOMEM);
        assert_null(tl);
        assert_int_equal(c.live, 0); /* nothing leaked */
        failed++;
    }
    assert_true(failed > 10);
    free_paths(paths, 3);
    rmdir(tmpdir);
}

/* ------------------------------------------------------------------ */
/* export                                                              */
/* ------------------------------------------------------------------ */

static size_t
count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

static void
test_export(void **state)
{
    (void)state;
    make_tmpdir();
    char *paths[2] = { write_dump("e_2.json", 4, 2, 1, 0x1000), write_dump("e_1.json", 3, 1, 0, 0x1000) };
    char *dir = NULL;
    assert_true(asprintf(&dir, "%s/out", tmpdir) > 0);
    hscope_export_options eo = HSCOPE_EXPORT_OPTIONS_INIT;
    eo.first_id = 7;
    hscope_export_t *ex = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_export_files(&ex, (const char *const *)paths, 2, dir, NULL, &eo, &err),
                     HSCOPE_OK);
    assert_int_equal(hscope_export_dump_count(ex), 2);
    assert_string_equal(hscope_export_dump_path(ex, 0), paths[1]); /* sequence 1 first */
    uint64_t objs, refs;
    hscope_export_totals(ex, &objs, &refs);
    assert_int_equal(objs, 7 + 4);
    assert_int_equal(refs, 0);
    hscope_load_stats ls = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_export_dump_stats(ex, 1, &ls), HSCOPE_OK);
    assert_int_equal(ls.objects, 7);
    assert_int_equal(ls.skipped_lines, 0);
    assert_int_equal(hscope_export_dump_stats(ex, 2, &ls), HSCOPE_ERR_NOT_FOUND);
    static const char *const files[] = { "dumps.csv", "objects.csv", "refs.csv", "roots.csv",
                                         "schema.sql", "schema.duckdb.sql" };
    size_t want[] = { 1 + 2, 1 + 11, 1, 1 + 2, 0, 0 };
    for (size_t i = 0; i < 6; i++) {
        char *p = NULL;
        assert_true(asprintf(&p, "%s/%s", dir, files[i]) > 0);
        if (want[i])
            assert_int_equal(count_lines(p), want[i]);
        else
            assert_true(count_lines(p) > 10);
        unlink(p);
        free(p);
    }
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_JSON;
    sink s = { 0 };
    assert_int_equal(hscope_export_write(ex, &ro, collect, &s, &err), HSCOPE_OK);
    assert_non_null(strstr(s.p, "{\"kind\":\"export\","));
    assert_non_null(strstr(s.p, "\"objects\":4,\"dump_id\":7,"));
    assert_non_null(strstr(s.p, "\"objects\":7,\"dump_id\":8,"));
    free(s.p);
    hscope_export_free(ex);
    /* JSON lines, no result wanted */
    eo.format = HSCOPE_FORMAT_JSONL;
    eo.first_id = 0;
    assert_int_equal(hscope_export_files(NULL, (const char *const *)paths, 2, dir, NULL, &eo, &err),
                     HSCOPE_OK);
    char *p = NULL;
    assert_true(asprintf(&p, "%s/objects.jsonl", dir) > 0);
    assert_int_equal(count_lines(p), 11);
    free(p);
    /* bad options */
    eo.format = HSCOPE_FORMAT_SVG;
    assert_int_equal(hscope_export_files(&ex, (const char *const *)paths, 2, dir, NULL, &eo, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    assert_null(ex);
    eo.format = 0;
    eo.first_id = 2000000000;
    assert_int_equal(hscope_export_files(&ex, (const char *const *)paths, 2, dir, NULL, &eo, &err),
                     HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_export_files(&ex, (const char *const *)paths, 2, NULL, NULL, NULL, &err),
                     HSCOPE_ERR_INVALID_ARG);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    free_paths(paths, 2);
    rmdir(tmpdir);
}

/* The whole text of a file (NUL-terminated), its length in *n. */
static char *
slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    assert_true(len >= 0);
    rewind(f);
    char *b = malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    b[len] = '\0';
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* A path under dir (free it). */
static char *
in_dir(const char *dir, const char *name)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

/* Copy the FIFO `from` into the file `to` until its writer closes it (in a
 * child process: no cmocka there). */
static pid_t
fifo_reader(const char *from, const char *to)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char buf[4096];
        ssize_t n;
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
            if (write(out, buf, (size_t)n) != n)
                _exit(2);
        _exit(in >= 0 && out >= 0 ? 0 : 1);
    }
    return pid;
}

/* An export over an earlier one's tables: a plain file is replaced (a
 * reader that has the old one open keeps reading the old rows, and the
 * permission bits stay), a symbolic link, a file with a second link and a
 * FIFO are written through, and nothing set aside is left in the
 * directory. */
static void
test_export_replace(void **state)
{
    (void)state;
    make_tmpdir();
    char *paths[1] = { write_dump("r_1.json", 5, 2, 1, 0x1000) };
    char *dir = in_dir(tmpdir, "out");
    hscope_export_options eo = HSCOPE_EXPORT_OPTIONS_INIT;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_export_files(NULL, (const char *const *)paths, 1, dir, NULL, &eo, &err),
                     HSCOPE_OK);
    char *objects = in_dir(dir, "objects.csv"), *refs = in_dir(dir, "refs.csv");
    char *roots = in_dir(dir, "roots.csv"), *dumps = in_dir(dir, "dumps.csv");
    char *target = in_dir(tmpdir, "refs-target.csv"), *second = in_dir(tmpdir, "roots-link.csv");
    char *stray = in_dir(dir, ".objects.csv.old"), *piped = in_dir(tmpdir, "dumps-piped.csv");
    size_t n_objects = count_lines(objects);
    assert_int_equal(n_objects, 1 + 8);
    assert_int_equal(chmod(objects, 0666), 0); /* what the umask below would not give */
    mode_t mask = umask(022);
    FILE *old = fopen(objects, "r"); /* a reader of the first export's rows */
    assert_non_null(old);
    struct stat before;
    assert_int_equal(stat(objects, &before), 0);
    /* refs.csv: a link to a file elsewhere; roots.csv: a second name */
    assert_int_equal(rename(refs, target), 0);
    assert_int_equal(symlink(target, refs), 0);
    assert_int_equal(link(roots, second), 0);
    FILE *f = fopen(stray, "w"); /* what a killed export left aside */
    assert_non_null(f);
    fputs("stale\n", f);
    assert_int_equal(fclose(f), 0);
    /* dumps.csv: a named pipe, read by another process */
    assert_int_equal(unlink(dumps), 0);
    assert_int_equal(mkfifo(dumps, 0644), 0);
    pid_t reader = fifo_reader(dumps, piped);
    eo.first_id = 3;
    assert_int_equal(hscope_export_files(NULL, (const char *const *)paths, 1, dir, NULL, &eo, &err),
                     HSCOPE_OK);
    int status = -1;
    for (int i = 0; i < 1000 && waitpid(reader, &status, WNOHANG) == 0; i++)
        usleep(10000); /* 10 s at most: a pipe nobody wrote to is a failure, not a hang */
    if (status == -1) {
        kill(reader, SIGKILL);
        waitpid(reader, NULL, 0);
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* objects.csv: a new file with the old one's bits; the old one, still
     * open, unlinked with its rows */
    struct stat now, held;
    assert_int_equal(stat(objects, &now), 0);
    assert_true(now.st_ino != before.st_ino);
    assert_int_equal(now.st_mode & 07777, 0666);
    umask(mask);
    assert_int_equal(fstat(fileno(old), &held), 0);
    assert_int_equal(held.st_nlink, 0);
    assert_int_equal(held.st_size, before.st_size);
    char line[256];
    size_t n = 0;
    while (fgets(line, sizeof(line), old))
        n++;
    assert_int_equal(n, n_objects);
    fclose(old);
    size_t len;
    char *text = slurp(objects, &len);
    assert_int_equal(count_lines(objects), n_objects);
    assert_non_null(strstr(text, "\n3,0x1000,"));
    free(text);
    /* refs.csv is still the link, and its target has the new header */
    assert_int_equal(lstat(refs, &now), 0);
    assert_true(S_ISLNK(now.st_mode));
    assert_int_equal(count_lines(target), 1);
    /* roots.csv: the same inode under both names, the new rows in it */
    struct stat a, b;
    assert_int_equal(stat(roots, &a), 0);
    assert_int_equal(stat(second, &b), 0);
    assert_int_equal(a.st_ino, b.st_ino);
    text = slurp(second, &len);
    assert_non_null(strstr(text, "\n3,vm,0x1000\n"));
    free(text);
    /* dumps.csv: still the pipe, and the reader got the table */
    assert_int_equal(lstat(dumps, &now), 0);
    assert_true(S_ISFIFO(now.st_mode));
    assert_int_equal(count_lines(piped), 2);
    /* nothing set aside is left */
    assert_int_equal(access(stray, F_OK), -1);
    char *aside = in_dir(dir, ".objects.csv.old");
    assert_int_equal(access(aside, F_OK), -1);
    free(aside);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    assert_int_equal(system(cmd), 0);
    free(objects);
    free(refs);
    free(roots);
    free(dumps);
    free(target);
    free(second);
    free(stray);
    free(piped);
    free(dir);
    free_paths(paths, 1);
}

static char *
export_fmt(const char *dump, const char *table, int32_t format)
{
    char *dir = NULL, *p = NULL;
    assert_true(asprintf(&dir, "%s/csv", tmpdir) > 0);
    const char *paths[1] = { dump };
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_export_options eo = HSCOPE_EXPORT_OPTIONS_INIT;
    eo.format = format;
    assert_int_equal(hscope_export_files(NULL, paths, 1, dir, NULL, &eo, &err), HSCOPE_OK);
    assert_true(asprintf(&p, "%s/%s.%s", dir, table,
                         format == HSCOPE_FORMAT_JSONL ? "jsonl" : "csv") > 0);
    size_t n;
    char *text = slurp(p, &n);
    assert_int_equal(strlen(text), n);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(p);
    free(dir);
    return text;
}

/* TEXT written as tmpdir/NAME; the path (free it). */
static char *
write_text(const char *name, const char *text)
{
    make_tmpdir();
    char *path = NULL;
    assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return path;
}

static char *
export_one(const char *dump, const char *table)
{
    return export_fmt(dump, table, HSCOPE_FORMAT_CSV);
}

/* JSON-lines values: text escaped as JSON (a quote and a backslash with a
 * backslash, a tab as \t, invalid UTF-8 as U+FFFD, < and > as \u003c and
 * \u003e so that no value can close a <script> element), NULL as null. */
static void
test_export_jsonl_cells(void **state)
{
    (void)state;
    char *path = write_text("cells.json",
          "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x3000\"]}\n"
          "{\"address\":\"0x2000\",\"type\":\"CLASS\",\"name\":\"Odd,\\\"Name\",\"memsize\":100}\n"
          "{\"address\":\"0x2100\",\"type\":\"CLASS\",\"name\":\"Bad\xffName\",\"memsize\":100}\n"
          "{\"address\":\"0x3000\",\"type\":\"OBJECT\",\"class\":\"0x2000\",\"references\":"
          "[\"0x3100\"],\"file\":\"a\\\\b.rb\",\"line\":5,\"method\":\"m</x>\","
          "\"generation\":7,\"memsize\":40}\n"
          "{\"address\":\"0x3100\",\"type\":\"STRING\",\"class\":\"0x2100\",\"bytesize\":3,"
          "\"file\":\"tab\\tx.rb\",\"line\":1,\"memsize\":40}\n");
    char *objects = export_fmt(path, "objects", HSCOPE_FORMAT_JSONL);
    assert_string_equal(objects,
        "{\"dump_id\":1,\"address\":\"0x2000\",\"type\":\"CLASS\",\"class\":\"\\u003chidden\\u003e\","
        "\"class_address\":null,\"memsize\":100,\"size\":null,\"file\":null,\"line\":null,"
        "\"method\":null,\"generation\":null,\"flags\":0,\"detail\":\"Odd,\\\"Name\"}\n"
        "{\"dump_id\":1,\"address\":\"0x2100\",\"type\":\"CLASS\",\"class\":\"\\u003chidden\\u003e\","
        "\"class_address\":null,\"memsize\":100,\"size\":null,\"file\":null,\"line\":null,"
        "\"method\":null,\"generation\":null,\"flags\":0,\"detail\":\"Bad\\ufffdName\"}\n"
        "{\"dump_id\":1,\"address\":\"0x3000\",\"type\":\"OBJECT\",\"class\":\"Odd,\\\"Name\","
        "\"class_address\":\"0x2000\",\"memsize\":40,\"size\":null,\"file\":\"a\\\\b.rb\",\"line\":5,"
        "\"method\":\"m\\u003c/x\\u003e\",\"generation\":7,\"flags\":0,\"detail\":null}\n"
        "{\"dump_id\":1,\"address\":\"0x3100\",\"type\":\"STRING\",\"class\":\"Bad\\ufffdName\","
        "\"class_address\":\"0x2100\",\"memsize\":40,\"size\":3,\"file\":\"tab\\tx.rb\",\"line\":1,"
        "\"method\":null,\"generation\":null,\"flags\":0,\"detail\":null}\n");
    free(objects);
    unlink(path);
    free(path);
}

/* CSV cells by the rules of docs/TIMELINE.md ("heapscope export"): a text
 * with a comma, a quote, a backslash, a byte over 0x7f or a leading space
 * quoted (quotes doubled), NULL empty, addresses 0x and lowercase hex,
 * numbers over 32 bits whole; rows across the write buffer and a text
 * longer than it come out whole. */
static void
test_export_csv_cells(void **state)
{
    (void)state;
    make_tmpdir();
    char *path = NULL;
    assert_true(asprintf(&path, "%s/cells.json", tmpdir) > 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x3000\"]}\n"
          "{\"address\":\"0x2000\",\"type\":\"CLASS\",\"name\":\"Odd,\\\"Name\",\"memsize\":100}\n"
          "{\"address\":\"0x2100\",\"type\":\"CLASS\",\"name\":\" Lead\",\"memsize\":100}\n"
          "{\"address\":\"0x3000\",\"type\":\"OBJECT\",\"class\":\"0x2000\",\"references\":"
          "[\"0x3100\",\"0x3100\",\"0x3200\"],\"file\":\"a.rb\",\"line\":5,\"method\":\"m\","
          "\"generation\":7,\"memsize\":40,\"flags\":{\"wb_protected\":true}}\n"
          "{\"address\":\"0x3100\",\"type\":\"STRING\",\"class\":\"0x2100\",\"bytesize\":12,"
          "\"file\":\"dir\\\\x.rb\",\"line\":0,\"memsize\":5000000000}\n"
          "{\"address\":\"0x3200\",\"type\":\"DATA\",\"struct\":\"my_struct\","
          "\"file\":\"caf\\u00e9.rb\",\"line\":9,\"memsize\":0}\n",
          f);
    assert_int_equal(fclose(f), 0);
    char *objects = export_one(path, "objects");
    assert_string_equal(objects,
        "dump_id,address,type,class,class_address,memsize,size,file,line,method,generation,"
        "flags,detail\n"
        "1,0x2000,CLASS,<hidden>,,100,,,,,,0,\"Odd,\"\"Name\"\n"
        "1,0x2100,CLASS,<hidden>,,100,,,,,,0,\" Lead\"\n"
        "1,0x3000,OBJECT,\"Odd,\"\"Name\",0x2000,40,,a.rb,5,m,7,128,\n"
        "1,0x3100,STRING,\" Lead\",0x2100,5000000000,12,\"dir\\x.rb\",0,,,0,\n"
        "1,0x3200,DATA,<hidden>,,0,,\"caf\xc3\xa9.rb\",9,,,0,my_struct\n");
    free(objects);
    char *refs = export_one(path, "refs");
    assert_string_equal(refs, "dump_id,from_address,to_address\n"
                              "1,0x3000,0x3100\n1,0x3000,0x3100\n1,0x3000,0x3200\n");
    free(refs);
    unlink(path);

    /* a class name of 1.2 MiB (more than the write buffer) and 100000
     * references of one object (rows across several buffers) */
    enum { NAME = 1200 * 1024, NREF = 100000, NOBJ = 50 };
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x3000\"]}\n"
          "{\"address\":\"0x2000\",\"type\":\"CLASS\",\"name\":\"", f);
    for (int k = 0; k < NAME; k++)
        fputc('N', f);
    fputs("\",\"memsize\":100}\n"
          "{\"address\":\"0x3000\",\"type\":\"OBJECT\",\"class\":\"0x2000\",\"references\":[", f);
    for (int k = 0; k < NREF; k++)
        fprintf(f, "%s\"0x%x\"", k ? "," : "", 0x10000 + 0x28 * (k % NOBJ));
    fputs("],\"memsize\":40}\n", f);
    for (int k = 0; k < NOBJ; k++)
        fprintf(f, "{\"address\":\"0x%x\",\"type\":\"OBJECT\",\"class\":\"0x2000\","
                   "\"memsize\":40}\n", 0x10000 + 0x28 * k);
    assert_int_equal(fclose(f), 0);
    refs = export_one(path, "refs");
    const char *r = strchr(refs, '\n') + 1;
    for (int k = 0; k < NREF; k++) {
        char want[64];
        int n = snprintf(want, sizeof(want), "1,0x3000,0x%x\n", 0x10000 + 0x28 * (k % NOBJ));
        assert_memory_equal(r, want, (size_t)n);
        r += n;
    }
    assert_int_equal(*r, '\0');
    free(refs);
    objects = export_one(path, "objects");
    const char *o = strchr(objects, '\n') + 1;
    const char *row3 = "1,0x3000,OBJECT,";
    assert_memory_equal(o, "1,0x2000,CLASS,<hidden>,,100,,,,,,0,", 36);
    o += 36;
    for (int k = 0; k < NAME; k++)
        assert_int_equal(o[k], 'N');
    o += NAME;
    assert_memory_equal(o, "\n", 1);
    assert_memory_equal(o + 1, row3, strlen(row3));
    o += 1 + strlen(row3);
    for (int k = 0; k < NAME; k++)
        assert_int_equal(o[k], 'N');
    assert_memory_equal(o + NAME, ",0x2000,40,,,,,,0,\n", 19);
    size_t rows = 0;
    for (const char *q = objects; *q; q++)
        rows += *q == '\n';
    assert_int_equal(rows, 1 + 2 + NOBJ);
    free(objects);
    unlink(path);
    free(path);
    rmdir(tmpdir);
}

/* ------------------------------------------------------------------ */
/* progress and cancellation                                            */
/* ------------------------------------------------------------------ */

typedef struct prog {
    int calls, cancel_at;
    uint64_t last_total;
} prog;

static int32_t
on_progress(void *ud, uint64_t done, uint64_t total)
{
    prog *p = ud;
    p->calls++;
    assert_true(done <= total);       /* the bytes of all the dumps */
    p->last_total = total;
    return p->cancel_at && p->calls >= p->cancel_at;
}

static void
test_progress_and_cancel(void **state)
{
    (void)state;
    make_tmpdir();
    char *paths[3] = { write_dump("p_1.json", 10, 1, 1, 0x1000), write_dump("p_2.json", 20, 1, 1, 0x1000),
                       write_dump("p_3.json", 30, 1, 1, 0x1000) };
    uint64_t bytes = 0;
    for (int k = 0; k < 3; k++) {
        struct stat st;
        assert_int_equal(stat(paths[k], &st), 0);
        bytes += (uint64_t)st.st_size;
    }
    prog p = { 0, 0, 0 };
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.progress = on_progress;
    lo.progress_user_data = &p;
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 3, &lo, NULL, &err),
                     HSCOPE_OK);
    assert_true(p.calls >= 3);               /* at least once per dump */
    assert_int_equal(p.last_total, bytes);   /* the sizes of all three files */
    hscope_timeline_free(tl);
    /* the callback says stop: cancelled, nothing returned */
    p = (prog){ 0, 2, 0 };
    assert_int_equal(hscope_timeline_compute(&tl, (const char *const *)paths, 3, &lo, NULL, &err),
                     HSCOPE_ERR_CANCELLED);
    assert_null(tl);
    free_paths(paths, 3);
    rmdir(tmpdir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_and_verdict),
        cmocka_unit_test(test_irregular_times_and_floor),
        cmocka_unit_test(test_small_steady_leak),
        cmocka_unit_test(test_name_rules),
        cmocka_unit_test(test_grew),
        cmocka_unit_test(test_warnings_and_errors),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_export),
        cmocka_unit_test(test_export_replace),
        cmocka_unit_test(test_export_csv_cells),
        cmocka_unit_test(test_export_jsonl_cells),
        cmocka_unit_test(test_progress_and_cancel),
    };
    return cmocka_run_group_tests_name("timeline", tests, NULL, NULL);
}
