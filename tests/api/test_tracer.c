/*
 * test_tracer.c - Ruby's allocation tracer (the DATA object
 * ObjectTracing/allocation_info_tracer in which
 * ObjectSpace.trace_object_allocations keeps its table) in the timeline,
 * the diff, the budget check and the waste analysis: left out by default
 * and counted (hscope_timeline_dump_excluded_tracer(),
 * hscope_diff_excluded_tracer(), hscope_check_excluded_tracer(),
 * hscope_waste_excluded_tracer()), kept with the _KEEP_TRACER flags,
 * on a hand-made series whose tracing starts between the first dump and
 * the second.  Every expected figure is computed by hand from the records
 * below.
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

/* A: two classes (100 B each) and two Objects of the application (40 B
 * each): 4 objects, 280 B. */
#define DUMP_A "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x300\",\"0x400\"]}\n" OBJS_A
#define OBJS_A                                                                               \
    "{\"address\":\"0x20\",\"type\":\"CLASS\",\"name\":\"Object\",\"memsize\":100}\n"        \
    "{\"address\":\"0x30\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n"        \
    "{\"address\":\"0x300\",\"type\":\"OBJECT\",\"class\":\"0x20\",\"file\":\"/app/a.rb\","  \
    "\"line\":3,\"method\":\"make\",\"memsize\":40}\n"                                        \
    "{\"address\":\"0x400\",\"type\":\"OBJECT\",\"class\":\"0x20\",\"file\":\"/app/a.rb\","  \
    "\"line\":3,\"method\":\"make\",\"memsize\":40}\n"

/* B: tracing on: A, the tracer (5000 B) and a String of 60 B only it
 * holds.  C: B with the tracer at 7000 B and one more String (/app/b.rb:9,
 * 50 B, new in C so not leaked).  The roots reach every object of B and C
 * (the String class also through 0x500: the tracer alone retains itself
 * and 0x280). */
#define ROOT_BC                                                                              \
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x200\",\"0x300\",\"0x400\","          \
    "\"0x500\"]}\n"
#define TRACER(M)                                                                            \
    "{\"address\":\"0x200\",\"type\":\"DATA\",\"class\":\"0x20\",\"struct\":"                \
    "\"ObjectTracing/allocation_info_tracer\",\"references\":[\"0x280\"],\"memsize\":" M "}\n" \
    "{\"address\":\"0x280\",\"type\":\"STRING\",\"class\":\"0x30\",\"memsize\":60}\n"
#define DUMP_B ROOT_BC OBJS_A TRACER("5000")
#define DUMP_C                                                                               \
    ROOT_BC OBJS_A TRACER("7000")                                                                    \
    "{\"address\":\"0x500\",\"type\":\"STRING\",\"class\":\"0x30\",\"file\":\"/app/b.rb\","  \
    "\"line\":9,\"memsize\":50}\n"

static char paths[3][96];

static int
setup(void **state)
{
    (void)state;
    const char *text[3] = { DUMP_A, DUMP_B, DUMP_C };
    for (int i = 0; i < 3; i++) {
        snprintf(paths[i], sizeof(paths[i]), "/tmp/hscope-tracer-%d-%d.json", (int)getpid(),
                 i + 1);
        FILE *f = fopen(paths[i], "w");
        if (!f || fwrite(text[i], 1, strlen(text[i]), f) != strlen(text[i]) || fclose(f) != 0)
            return -1;
    }
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        unlink(paths[i]);
    return 0;
}

static hscope_timeline_t *
timeline(uint32_t flags)
{
    const char *p[3] = { paths[0], paths[1], paths[2] };
    hscope_timeline_options o = HSCOPE_TIMELINE_OPTIONS_INIT;
    o.flags = flags;
    o.by = "class";
    o.order = HSCOPE_ORDER_GIVEN;
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_timeline_compute(&tl, p, 3, NULL, &o, &err), HSCOPE_OK);
    return tl;
}

static int
has_group(const hscope_timeline_t *tl, const char *key)
{
    for (uint64_t g = 0; g < hscope_timeline_group_count(tl); g++)
        if (strcmp(hscope_timeline_group_key(tl, g), key) == 0)
            return 1;
    return 0;
}

static void
test_timeline(void **state)
{
    (void)state;
    /* per dump: objects and memsize without the tracer, and the tracer */
    const uint64_t n[3] = { 4, 5, 6 }, m[3] = { 280, 340, 390 };
    const uint64_t tn[3] = { 0, 1, 1 }, tm[3] = { 0, 5000, 7000 };
    hscope_timeline_t *tl = timeline(0);
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t c, s, a = 9, b = 9;
        assert_int_equal(hscope_timeline_dump_totals(tl, i, &c, &s), HSCOPE_OK);
        hscope_timeline_dump_excluded_tracer(tl, i, &a, &b);
        assert_int_equal(c, n[i]);
        assert_int_equal(s, m[i]);
        assert_int_equal(a, tn[i]);
        assert_int_equal(b, tm[i]);
    }
    assert_false(has_group(tl, "<allocation tracer>"));
    uint64_t a = 9, b = 9;
    hscope_timeline_dump_excluded_tracer(tl, 3, &a, &b); /* out of range */
    assert_int_equal(a, 0);
    assert_int_equal(b, 0);
    hscope_timeline_dump_excluded_tracer(tl, 1, NULL, NULL);
    hscope_timeline_free(tl);
    tl = timeline(HSCOPE_TIMELINE_KEEP_TRACER);
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t c, s;
        assert_int_equal(hscope_timeline_dump_totals(tl, i, &c, &s), HSCOPE_OK);
        hscope_timeline_dump_excluded_tracer(tl, i, &a, &b);
        assert_int_equal(c, n[i] + tn[i]);
        assert_int_equal(s, m[i] + tm[i]);
        assert_int_equal(a, 0);
        assert_int_equal(b, 0);
    }
    assert_true(has_group(tl, "<allocation tracer>"));
    hscope_timeline_free(tl);
    /* an unknown flag is still refused */
    const char *p[1] = { paths[0] };
    hscope_timeline_options o = HSCOPE_TIMELINE_OPTIONS_INIT;
    o.flags = 0x80;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_timeline_compute(&tl, p, 1, NULL, &o, &err), HSCOPE_ERR_UNSUPPORTED);
}

static void
test_diff(void **state)
{
    (void)state;
    for (int keep = 0; keep < 2; keep++) {
        hscope_diff_options o = HSCOPE_DIFF_OPTIONS_INIT;
        o.flags = keep ? HSCOPE_DIFF_KEEP_TRACER : 0;
        hscope_diff_t *d = NULL;
        hscope_error err = HSCOPE_ERROR_INIT;
        assert_int_equal(hscope_diff_files(&d, paths[0], paths[1], paths[2], NULL, &o, &err),
                         HSCOPE_OK);
        uint64_t tn = 9, tm = 9;
        hscope_diff_excluded_tracer(d, &tn, &tm);
        /* new in B, alive in C: the tracer (7000 B in C) and its String */
        assert_int_equal(hscope_diff_count(d), keep ? 2 : 1);
        assert_int_equal(hscope_diff_memsize(d), keep ? 7060 : 60);
        assert_int_equal(tn, keep ? 0 : 1);
        assert_int_equal(tm, keep ? 0 : 7000);
        hscope_diff_free(d);
    }
}

static hscope_check_t *
check(const char *text, uint32_t flags, int three)
{
    hscope_budget_t *b = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_budget_parse(&b, text, strlen(text), "t.toml", &err), HSCOPE_OK);
    hscope_check_options o = HSCOPE_CHECK_OPTIONS_INIT;
    o.flags = flags;
    const char *p[3] = { paths[0], paths[1], paths[2] };
    hscope_check_t *c = NULL;
    if (three)
        assert_int_equal(hscope_check_compute(&c, b, p, 3, NULL, &o, &err), HSCOPE_OK);
    else
        assert_int_equal(hscope_check_compute(&c, b, p + 2, 1, NULL, &o, &err), HSCOPE_OK);
    hscope_budget_free(b);
    return c;
}

static uint64_t
actual(const hscope_check_t *c, uint64_t i)
{
    hscope_check_rule r = HSCOPE_CHECK_RULE_INIT;
    assert_int_equal(hscope_check_rule_get(c, i, &r), HSCOPE_OK);
    assert_int_equal(r.found, 1);
    return r.actual;
}

static void
test_check(void **state)
{
    (void)state;
    /* the live totals of C, the tracer's own rule, what the roots keep
     * alive (the tracer and the String only it holds left out: 390 - 60)
     * and the leak (its String alone, the tracer left out) */
    const char *budget = "[total]\nmemsize = 390\nretained = 330\n"
                         "[class.\"<allocation tracer>\"]\nmemsize = 7000\nobjects = 1\n"
                         "[leaked]\nobjects = 1\n"
                         "[leaked.class.\"<allocation tracer>\"]\nmemsize = 7000\n";
    hscope_check_t *c = check(budget, 0, 1);
    const uint64_t want[6] = { 390, 330, 7000, 1, 1, 7000 };
    for (uint64_t i = 0; i < 6; i++)
        assert_int_equal(actual(c, i), want[i]);
    assert_int_equal(hscope_check_over_count(c), 0);
    uint64_t n, m, x, tn = 9, tm = 9;
    hscope_check_totals(c, &n, &m, &x);
    hscope_check_excluded_tracer(c, &tn, &tm);
    assert_int_equal(n, 6);
    assert_int_equal(m, 390);
    assert_int_equal(tn, 1);
    assert_int_equal(tm, 7000);
    hscope_check_free(c);
    /* kept: in the totals, retained and the leak; its rules the same */
    c = check(budget, HSCOPE_CHECK_KEEP_TRACER, 1);
    const uint64_t kept[6] = { 7390, 7390, 7000, 1, 2, 7000 };
    for (uint64_t i = 0; i < 6; i++)
        assert_int_equal(actual(c, i), kept[i]);
    assert_int_equal(hscope_check_over_count(c), 3);
    hscope_check_excluded_tracer(c, &tn, &tm);
    assert_int_equal(tn, 0);
    assert_int_equal(tm, 0);
    hscope_check_free(c);
    /* one dump, streamed (one key) */
    c = check("[class.\"<allocation tracer>\"]\nmemsize = 7000\n[total]\nobjects = 6\n", 0, 0);
    assert_int_equal(actual(c, 0), 7000);
    assert_int_equal(actual(c, 1), 6);
    hscope_check_free(c);
}

static void
test_waste(void **state)
{
    (void)state;
    for (int keep = 0; keep < 2; keep++) {
        hscope_waste_options o = HSCOPE_WASTE_OPTIONS_INIT;
        o.flags = keep ? HSCOPE_WASTE_KEEP_TRACER : 0;
        hscope_waste_t *w = NULL;
        hscope_error err = HSCOPE_ERROR_INIT;
        assert_int_equal(hscope_waste_file(&w, paths[2], NULL, &o, &err), HSCOPE_OK);
        hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
        assert_int_equal(hscope_waste_totals_get(w, &t), HSCOPE_OK);
        assert_int_equal(t.objects, keep ? 7 : 6);
        assert_int_equal(t.memsize, keep ? 7390 : 390);
        uint64_t tn = 9, tm = 9;
        hscope_waste_excluded_tracer(w, &tn, &tm);
        assert_int_equal(tn, keep ? 0 : 1);
        assert_int_equal(tm, keep ? 0 : 7000);
        hscope_waste_free(w);
        /* the loaded heap agrees */
        hscope_heap_t *h = NULL;
        hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
        lo.flags |= HSCOPE_LOAD_VALUES;
        assert_int_equal(hscope_heap_open_file(&h, paths[2], &lo, &err), HSCOPE_OK);
        assert_int_equal(hscope_waste_compute(&w, h, &o, &err), HSCOPE_OK);
        hscope_waste_totals th = HSCOPE_WASTE_TOTALS_INIT;
        assert_int_equal(hscope_waste_totals_get(w, &th), HSCOPE_OK);
        assert_int_equal(th.objects, t.objects);
        assert_int_equal(th.memsize, t.memsize);
        uint64_t hn = 9, hm = 9;
        hscope_waste_excluded_tracer(w, &hn, &hm);
        assert_int_equal(hn, tn);
        assert_int_equal(hm, tm);
        hscope_waste_free(w);
        hscope_heap_free(h);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeline),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_waste),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
