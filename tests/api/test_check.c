/*
 * test_check.c - budgets and checks through the public API only.
 *
 * Three small hand-made dumps A, B, C (written below); every expected
 * number is worked out by hand from their records (see the table before
 * the tests), not taken from the program.  Also: the budget parser's
 * values and its errors (line and key in the message), the dump count a
 * budget needs, the series warnings passed through, the writers, the
 * option checks.  (Failure injection: test_alloc.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

static char tmpdir[512];
static char path_a[600], path_b[600], path_c[600];

#define ROOT "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x100\",\"0x200\"]}\n"
#define CLASSES                                                               \
    "{\"address\":\"0x10\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n" \
    "{\"address\":\"0x20\",\"type\":\"CLASS\",\"name\":\"Array\",\"memsize\":100}\n"
#define OBJ(addr, type, cls, mem, file, line, gen, refs)                        \
    "{\"address\":\"" addr "\",\"type\":\"" type "\",\"class\":\"" cls "\","    \
    "\"references\":[" refs "],\"memsize\":" #mem ",\"file\":\"" file "\","      \
    "\"line\":" #line ",\"generation\":" #gen "}\n"
#define ARR(refs) OBJ("0x100", "ARRAY", "0x20", 40, "app.rb", 1, 1, refs)
#define S200 OBJ("0x200", "STRING", "0x10", 50, "app.rb", 2, 1, "")
#define S300 OBJ("0x300", "STRING", "0x10", 60, "/gems/foo-1.0/lib/foo.rb", 3, 1, "")
#define S400 OBJ("0x400", "STRING", "0x10", 70, "app.rb", 5, 2, "")
#define S500 OBJ("0x500", "STRING", "0x10", 80, "app.rb", 6, 2, "")
#define S600 OBJ("0x600", "STRING", "0x10", 90, "app.rb", 7, 3, "")
#define DUMPER                                                                 \
    "{\"address\":\"0x700\",\"type\":\"STRING\",\"class\":\"0x10\",\"memsize\":30," \
    "\"file\":\"/usr/lib/ruby/3.1.0/objspace.rb\",\"line\":10,\"method\":\"dump_all\"," \
    "\"generation\":3}\n"

static const char dump_a[] = ROOT CLASSES ARR("\"0x300\"") S200 S300;
static const char dump_b[] = ROOT CLASSES ARR("\"0x300\",\"0x400\"") S200 S300 S400 S500;
static const char dump_c[] = ROOT CLASSES ARR("\"0x300\",\"0x400\"") S200 S300 S400 S600 DUMPER;

/*
 * The answers, by hand, for C (the dumper's 0x700, 30 B, left out):
 *  live: 0x10 100, 0x20 100, 0x100 40, 0x200 50, 0x300 60, 0x400 70,
 *        0x600 90 = 7 objects, 510 B.
 *  class "String": 0x200 0x300 0x400 0x600 = 4 objects, 270 B (5 and
 *        300 B with the dumper's); "Array": 0x100, 40 B.
 *  gem: 0x300's file is below gems/foo-1.0: "foo-1.0", 1 object, 60 B;
 *        a budget's "foo" is that gem, any version.
 *  site "app.rb:2:String": 0x200, 1 object, 50 B; a budget's
 *        "lib/foo.rb:3:String" is 0x300's site (its path ends so after a
 *        '/'), "oo.rb:3:String" is not.
 *  reachable (vm -> 0x100, 0x200; 0x100 -> 0x300, 0x400; every object ->
 *        its class): 0x100 0x200 0x300 0x400 0x10 0x20 = 6 objects, 420 B
 *        (0x600 and 0x700 are garbage).
 *  dominators: vm dominates 0x100, 0x200 and 0x10 (String: reached
 *        through 0x200 and through 0x100 -> 0x300); 0x100 dominates 0x300,
 *        0x400 and 0x20 (Array, reached only through 0x100).
 *  retained by class "String": its topmost objects 0x200 (50), 0x300
 *        (60), 0x400 (70) = 180 B; "Array": 0x100 with what it dominates
 *        = 40 + 60 + 70 + 100 = 270 B; gem "foo-1.0": 0x300, 60 B.
 *  leaked A -> B -> C: 0x400 (born in B, generation 2, alive in C): 1
 *        object, 70 B; 0x500 died, 0x600 was born after B.
 */

static void
write_file(char *path, size_t n, const char *name, const char *text)
{
    snprintf(path, n, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
}

static int
setup(void **state)
{
    (void)state;
    write_file(path_a, sizeof(path_a), "a.json", dump_a);
    write_file(path_b, sizeof(path_b), "b.json", dump_b);
    write_file(path_c, sizeof(path_c), "c.json", dump_c);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    unlink(path_a);
    unlink(path_b);
    unlink(path_c);
    return 0;
}

static hscope_budget_t *
budget(const char *text)
{
    hscope_budget_t *b = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_budget_parse(&b, text, strlen(text), "b.toml", &err);
    if (st != HSCOPE_OK)
        fail_msg("budget: %s", err.message);
    return b;
}

static hscope_check_t *
check(const char *text, const char *const *paths, uint64_t n, uint32_t flags)
{
    hscope_budget_t *b = budget(text);
    hscope_check_t *c = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_check_options o = HSCOPE_CHECK_OPTIONS_INIT;
    o.flags = flags;
    hscope_status st = hscope_check_compute(&c, b, paths, n, NULL, &o, &err);
    hscope_budget_free(b);
    if (st != HSCOPE_OK)
        fail_msg("check: %s", err.message);
    return c;
}

typedef struct want {
    int32_t scope, metric;
    const char *key;
    uint64_t line, limit, actual;
    int32_t over, found;
} want;

static void
expect_rules(const hscope_check_t *c, const want *w, size_t n)
{
    assert_int_equal(hscope_check_rule_count(c), n);
    uint64_t over = 0;
    for (size_t i = 0; i < n; i++) {
        hscope_check_rule r = HSCOPE_CHECK_RULE_INIT;
        assert_int_equal(hscope_check_rule_get(c, i, &r), HSCOPE_OK);
        if (r.scope != w[i].scope || r.metric != w[i].metric || r.line != w[i].line ||
            r.limit != w[i].limit || r.actual != w[i].actual || r.over != w[i].over ||
            r.found != w[i].found ||
            (w[i].key ? !r.key || strcmp(r.key, w[i].key) != 0 : r.key != NULL))
            fail_msg("rule %zu (line %llu): scope %d metric %d key %s limit %llu actual %llu "
                     "over %d found %d; wanted actual %llu over %d found %d",
                     i, (unsigned long long)r.line, r.scope, r.metric, r.key ? r.key : "-",
                     (unsigned long long)r.limit, (unsigned long long)r.actual, r.over,
                     r.found, (unsigned long long)w[i].actual, w[i].over, w[i].found);
        over += (uint64_t)w[i].over;
    }
    assert_int_equal(hscope_check_over_count(c), over);
    hscope_check_rule r = HSCOPE_CHECK_RULE_INIT;
    assert_int_equal(hscope_check_rule_get(c, n, &r), HSCOPE_ERR_NOT_FOUND);
}

#define T HSCOPE_BUDGET_TOTAL
#define L HSCOPE_BUDGET_LEAKED
#define CL HSCOPE_BUDGET_CLASS
#define G HSCOPE_BUDGET_GEM
#define SI HSCOPE_BUDGET_SITE
#define OB HSCOPE_BUDGET_OBJECTS
#define ME HSCOPE_BUDGET_MEMSIZE
#define RE HSCOPE_BUDGET_RETAINED

/* One dump, every scope but leaked, every metric; limits one below or at
 * the hand-computed values. */
static void
test_one_dump(void **state)
{
    (void)state;
    const char *text = "# one dump\n"
                       "[total]\n"
                       "objects = 7\n"
                       "memsize = 509\n"
                       "retained = 420\n"
                       "[class.\"String\"]\n"
                       "objects = 3\n"
                       "memsize = \"1 KB\"\n"
                       "retained = 179\n"
                       "[class.Array]\n"
                       "retained = 270\n"
                       "[gem.\"foo\"]\n"
                       "objects = 0\n"
                       "memsize = 60\n"
                       "retained = 59\n"
                       "[site.'app.rb:2:String']\n"
                       "memsize = 49\n"
                       "[site.\"nowhere.rb:1:String\"]\n"
                       "objects = 0\n"
                       "[gem.\"fo\"]\n"
                       "objects = 0\n"
                       "[site.\"lib/foo.rb:3:String\"]\n"
                       "memsize = 59\n"
                       "[site.\"oo.rb:3:String\"]\n"
                       "memsize = 59\n";
    const want w[] = {
        { T, OB, NULL, 3, 7, 7, 0, 1 },
        { T, ME, NULL, 4, 509, 510, 1, 1 },
        { T, RE, NULL, 5, 420, 420, 0, 1 },
        { CL, OB, "String", 7, 3, 4, 1, 1 },
        { CL, ME, "String", 8, 1024, 270, 0, 1 },
        { CL, RE, "String", 9, 179, 180, 1, 1 },
        { CL, RE, "Array", 11, 270, 270, 0, 1 },
        { G, OB, "foo", 13, 0, 1, 1, 1 },
        { G, ME, "foo", 14, 60, 60, 0, 1 },
        { G, RE, "foo", 15, 59, 60, 1, 1 },
        { SI, ME, "app.rb:2:String", 17, 49, 50, 1, 1 },
        { SI, OB, "nowhere.rb:1:String", 19, 0, 0, 0, 0 },
        { G, OB, "fo", 21, 0, 0, 0, 0 },
        { SI, ME, "lib/foo.rb:3:String", 23, 59, 60, 1, 1 },
        { SI, ME, "oo.rb:3:String", 25, 59, 0, 0, 0 },
    };
    const char *paths[] = { path_c };
    hscope_check_t *c = check(text, paths, 1, 0);
    expect_rules(c, w, sizeof(w) / sizeof(w[0]));
    uint64_t n, m, x;
    hscope_check_totals(c, &n, &m, &x);
    assert_int_equal(n, 7);
    assert_int_equal(m, 510);
    assert_int_equal(x, 1);
    assert_int_equal(hscope_check_warnings(c), 0);
    /* the rules whose group the dump lacks are warned of, with the dump's
     * names within an edit distance of a third of the name's length (at
     * least 2): "oo.rb:3:String" is 4 from each app.rb:N:String (o -> a,
     * o -> p, insert p, the line digit), "fo" 5 from "foo-1.0" */
    assert_string_equal(hscope_check_warning_text(c),
                        "b.toml:19: site.\"nowhere.rb:1:String\".objects: the dump has no site "
                        "\"nowhere.rb:1:String\" and no name near it\n"
                        "b.toml:21: gem.\"fo\".objects: the dump has no gem \"fo\" and no name "
                        "near it\n"
                        "b.toml:25: site.\"oo.rb:3:String\".memsize: the dump has no site "
                        "\"oo.rb:3:String\"; closest: app.rb:2:String, app.rb:5:String, "
                        "app.rb:7:String");
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_check_stats(c, &s), HSCOPE_OK);
    assert_int_equal(s.objects, 8);
    hscope_check_free(c);
}

/* One grouping key is streamed, several load the heap: the same answers;
 * --keep-dumper counts the dumper's String. */
static void
test_paths_agree(void **state)
{
    (void)state;
    const char *paths[] = { path_c };
    const want one[] = { { CL, OB, "String", 2, 100, 4, 0, 1 },
                         { CL, ME, "String", 3, 100, 270, 1, 1 } };
    hscope_check_t *c = check("[class.String]\nobjects = 100\nmemsize = 100\n", paths, 1, 0);
    expect_rules(c, one, 2);
    hscope_check_free(c);
    const want two[] = { { CL, OB, "String", 2, 100, 4, 0, 1 },
                         { SI, OB, "app.rb:5:String", 4, 0, 1, 1, 1 } };
    c = check("[class.String]\nobjects = 100\n[site.\"app.rb:5:String\"]\nobjects = 0\n", paths,
              1, 0);
    expect_rules(c, two, 2);
    hscope_check_free(c);
    const want kept[] = { { T, OB, NULL, 2, 8, 8, 0, 1 },
                          { CL, ME, "String", 4, 299, 300, 1, 1 } };
    c = check("[total]\nobjects = 8\n[class.String]\nmemsize = 299\n", paths, 1,
              HSCOPE_CHECK_KEEP_DUMPER);
    expect_rules(c, kept, 2);
    uint64_t n, m, x;
    hscope_check_totals(c, &n, &m, &x);
    assert_true(n == 8 && m == 540 && x == 0);
    hscope_check_free(c);
}

/* Three dumps: the leak of A -> B -> C, the totals of C. */
static void
test_leaked(void **state)
{
    (void)state;
    const char *paths[] = { path_a, path_b, path_c };
    const want w[] = { { L, OB, NULL, 2, 1, 1, 0, 1 },
                       { L, ME, NULL, 3, 69, 70, 1, 1 },
                       { T, ME, NULL, 5, 510, 510, 0, 1 } };
    hscope_check_t *c = check("[leaked]\nobjects = 1\nmemsize = 69\n[total]\nmemsize = 510\n",
                              paths, 3, 0);
    expect_rules(c, w, 3);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_check_stats(c, &s), HSCOPE_ERR_NOT_FOUND);
    hscope_check_free(c);

    /* the same dump three times: the series check's warning passes through */
    const char *same[] = { path_c, path_c, path_c };
    const want none[] = { { L, OB, NULL, 2, 0, 0, 0, 1 } };
    c = check("[leaked]\nobjects = 0\n", same, 3, 0);
    expect_rules(c, none, 1);
    assert_true(hscope_check_warnings(c) & HSCOPE_DIFF_WARN_REPEATED);
    assert_non_null(strstr(hscope_check_warning_text(c), "c.json"));
    hscope_check_free(c);

    /* three dumps, no [leaked]: only C is read, and a warning says so */
    c = check("[total]\nobjects = 7\n", paths, 3, 0);
    assert_int_equal(hscope_check_over_count(c), 0);
    assert_non_null(strstr(hscope_check_warning_text(c), "not read"));
    hscope_check_free(c);
}

/* [leaked] needs three dumps; a check takes one or three. */
static void
test_dump_count(void **state)
{
    (void)state;
    hscope_budget_t *b = budget("[total]\nobjects = 1\n\n[leaked]\nobjects = 0\n");
    assert_int_equal(hscope_budget_rule_count(b), 2);
    assert_int_equal(hscope_budget_dumps_needed(b), 3);
    const char *paths[] = { path_a, path_b, path_c };
    hscope_check_t *c = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_check_compute(&c, b, paths + 2, 1, NULL, NULL, &err),
                     HSCOPE_ERR_INVALID_ARG);
    assert_null(c);
    assert_string_equal(err.message, "b.toml:4: leaked: needs three dumps (A B C, in time "
                                     "order), 1 given");
    hscope_budget_free(b);
    b = budget("[total]\nobjects = 1\n");
    assert_int_equal(hscope_budget_dumps_needed(b), 1);
    assert_int_equal(hscope_check_compute(&c, b, paths, 2, NULL, NULL, &err),
                     HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_check_compute(&c, b, paths, 0, NULL, NULL, &err),
                     HSCOPE_ERR_INVALID_ARG);
    /* options: an unknown flag, a non-zero unknown tail */
    struct {
        hscope_check_options o;
        uint32_t extra;
    } big = { HSCOPE_CHECK_OPTIONS_INIT, 1 };
    big.o.size = sizeof(big);
    assert_int_equal(hscope_check_compute(&c, b, paths, 1, NULL, &big.o, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    hscope_check_options o = HSCOPE_CHECK_OPTIONS_INIT;
    o.flags = 0x80;
    assert_int_equal(hscope_check_compute(&c, b, paths, 1, NULL, &o, &err),
                     HSCOPE_ERR_UNSUPPORTED);
    /* a dump that is not there: the error names it */
    const char *missing[] = { "/nonexistent/heap.json" };
    assert_int_equal(hscope_check_compute(&c, b, missing, 1, NULL, NULL, &err), HSCOPE_ERR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/heap.json"));
    assert_null(c);
    hscope_budget_free(b);
}

/* Sizes: 1024-based units, fractions rounded down, underscores. */
static void
test_values(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        uint64_t bytes;
    } sizes[] = {
        { "0", 0 },
        { "1_000", 1000 },
        { "+5", 5 },
        { "\"100\"", 100 },
        { "\"100 B\"", 100 },
        { "\"1 KB\"", 1024 },
        { "\"1KiB\"", 1024 },
        { "\"1.5 kb\"", 1536 },
        { "'0.1 KB'", 102 },
        { "\"200 MB\"", 200ull << 20 },
        { "\"1.25 GB\"", 5ull << 28 },
        { "\"2 TB\"", 2ull << 40 },
        { "\"0.000000001 TB\"", 1099 },
        { "\"16777215 TB\"", 16777215ull << 40 },
        { "18446744073709551615", UINT64_MAX },
    };
    const char *paths[] = { path_c };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char text[128];
        snprintf(text, sizeof(text), "[total]\nmemsize = %s  # a comment\r\n", sizes[i].value);
        hscope_check_t *c = check(text, paths, 1, 0);
        hscope_check_rule r = HSCOPE_CHECK_RULE_INIT;
        assert_int_equal(hscope_check_rule_get(c, 0, &r), HSCOPE_OK);
        if (r.limit != sizes[i].bytes)
            fail_msg("memsize = %s: %llu bytes, wanted %llu", sizes[i].value,
                     (unsigned long long)r.limit, (unsigned long long)sizes[i].bytes);
        hscope_check_free(c);
    }
}

/* Every error names the budget, the line and the key. */
static void
test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t line;
        const char *message;
    } bad[] = {
        { "[total]\nmemsize = \"3 XB\"\n", 2, "b.toml:2: memsize: unknown unit in \"3 XB\"" },
        { "[totl]\nobjects = 1\n", 1, "b.toml:1: [totl]: unknown section" },
        { "objects = 5\n", 1, "b.toml:1: objects: a key outside a section" },
        { "[total]\nobjects = 5\n\nobjects = 6\n", 4,
          "b.toml:4: objects: given twice in this section (first at line 2)" },
        { "[total]\nobjects = \"5\"\n", 2, "b.toml:2: objects: expected a whole number" },
        { "[total]\nobjects = -5\n", 2, "b.toml:2: objects: must not be negative" },
        { "[total]\nmemsize = \"-5 MB\"\n", 2, "b.toml:2: memsize: must not be negative" },
        { "[total]\nobjects = 1.5\n", 2, "b.toml:2: objects: expected a whole number" },
        { "[total]\nobjects = 18446744073709551616\n", 2, "b.toml:2: objects: not a whole "
                                                          "number, or too large" },
        { "[total]\nmemsize = \"16777216 TB\"\n", 2, "b.toml:2: memsize: \"16777216 TB\" is too "
                                                     "large" },
        { "[total]\nobjects = 1__0\n", 2, "b.toml:2: objects: not a whole number" },
        { "[total]\nobjects = 05\n", 2, "b.toml:2: objects: a number does not start with 0" },
        { "[total]\nobjects = 5 6\n", 2, "b.toml:2: objects: unexpected '6'" },
        { "[total]\nobjects =\n", 2, "b.toml:2: objects: no value after '='" },
        { "[total]\nobjects 5\n", 2, "b.toml:2: objects: expected '='" },
        { "[total]\nobjects = true\n", 2, "b.toml:2: objects: expected a whole number, not "
                                          "'true'" },
        { "[total]\nmemsize = \"\"\n", 2, "b.toml:2: memsize: expected a size" },
        { "[total]\nmemsize = \"1. MB\"\n", 2, "b.toml:2: memsize: expected digits after" },
        { "[total]\nfoo = 5\n", 2, "b.toml:2: foo: unknown key in [total] (it has objects, "
                                   "memsize, retained)" },
        { "[leaked]\nretained = 5\n", 2, "b.toml:2: retained: unknown key in [leaked]" },
        { "[total]\nobjects.x = 5\n", 2, "b.toml:2: objects: dotted keys" },
        { "[class]\nobjects = 1\n", 1, "b.toml:1: [class]: needs a name" },
        { "[total.x]\nobjects = 1\n", 1, "b.toml:1: [total.x]: [total] takes no name" },
        { "[site.\"a.rb:12\"]\nobjects = 1\n", 1, "b.toml:1: [site.\"a.rb:12\"]: a site is " },
        { "[total]\nobjects = 1\n[total]\n", 3, "b.toml:3: [total]: this section is already "
                                                "defined at line 1" },
        { "[class.\"A\"]\nobjects = 1\n[class.'A']\n", 3, "b.toml:3: [class.'A']: this section "
                                                          "is already defined" },
        { "[class.\"a\\qb\"]\n", 1, "b.toml:1: [class.\"a\\qb\"]: escape '\\q' is not "
                                   "supported" },
        { "[class.\"abc]\n", 1, "b.toml:1: [class.\"abc]: a string is not closed" },
        { "[class.\"\"]\nobjects = 1\n", 1, "b.toml:1: [class.\"\"]: the name is empty" },
        { "[[total]]\n", 1, "b.toml:1: [[total]: arrays of tables" },
        { "[total\nobjects = 1\n", 1, "b.toml:1: [total: expected ']'" },
        { "[total] x\n", 1, "b.toml:1: [total]: unexpected 'x'" },
        { "# only a comment\n\n", 0, "b.toml: no limits" },
        { "[total]\n", 0, "b.toml: no limits" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hscope_budget_t *b = (hscope_budget_t *)1;
        hscope_error err = HSCOPE_ERROR_INIT;
        hscope_status st = hscope_budget_parse(&b, bad[i].text, strlen(bad[i].text), "b.toml",
                                               &err);
        if (st != HSCOPE_ERR_PARSE || b != NULL || err.line != bad[i].line ||
            strncmp(err.message, bad[i].message, strlen(bad[i].message)) != 0)
            fail_msg("budget %zu: status %d line %llu \"%s\", wanted line %llu \"%s...\"", i,
                     st, (unsigned long long)err.line, err.message,
                     (unsigned long long)bad[i].line, bad[i].message);
    }
    /* a NUL byte is an error too, not the end of the text */
    hscope_budget_t *b = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_budget_parse(&b, "[total]\nobjects = 1\0\n", 21, "b.toml", &err),
                     HSCOPE_ERR_PARSE);
    assert_int_equal(err.line, 2);
    /* a file: its path names it; a missing file is an I/O error */
    char p[700];
    write_file(p, sizeof(p), "bad.toml", "[total]\nobjects = lots\n");
    assert_int_equal(hscope_budget_load_file(&b, p, &err), HSCOPE_ERR_PARSE);
    assert_non_null(strstr(err.message, "bad.toml:2: objects: "));
    unlink(p);
    assert_int_equal(hscope_budget_load_file(&b, p, &err), HSCOPE_ERR_IO);
    assert_null(b);
    assert_int_equal(hscope_budget_parse(NULL, "", 0, NULL, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_budget_parse(&b, NULL, 3, NULL, &err), HSCOPE_ERR_INVALID_ARG);
}

typedef struct sink {
    char buf[16384];
    size_t len;
} sink;

static int32_t
to_sink(void *ud, const char *data, uint64_t len)
{
    sink *s = ud;
    if (s->len + len >= sizeof(s->buf))
        return 1;
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    s->buf[s->len] = '\0';
    return 0;
}

/* A [leaked] rule on dumps that cannot answer it: no verdict, said. */
static void
test_no_verdict(void **state)
{
    (void)state;
    const char *budget = "[leaked]\nobjects = 100\n[total]\nmemsize = \"1 GB\"\n";
    const char *sets[3][3] = { { path_a, path_b, path_c },   /* in order: a verdict */
                               { path_c, path_b, path_a },   /* backwards by generation */
                               { path_a, path_a, path_a } }; /* one dump three times */
    const char *why[3] = { NULL, "out of time order", "the same dump more than once" };
    for (int k = 0; k < 3; k++) {
        hscope_check_t *c = check(budget, sets[k], 3, 0);
        const char *nv = hscope_check_no_verdict(c);
        if (!why[k]) {
            assert_null(nv);
            assert_int_equal(hscope_check_over_count(c), 0);
        } else {
            assert_non_null(nv);
            assert_non_null(strstr(nv, why[k]));
            hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
            sink s = { .len = 0 };
            hscope_error err = HSCOPE_ERROR_INIT;
            assert_int_equal(hscope_check_write(c, &ro, to_sink, &s, &err), HSCOPE_OK);
            assert_true(strncmp(s.buf, "NO VERDICT: ", 12) == 0);
            assert_null(strstr(s.buf, "within budget"));
            ro.format = HSCOPE_FORMAT_JSON;
            s.len = 0;
            assert_int_equal(hscope_check_write(c, &ro, to_sink, &s, &err), HSCOPE_OK);
            assert_non_null(strstr(s.buf, "\"within_budget\":false,\"verdict\":\"none\","
                                          "\"no_verdict\":\"no verdict: "));
        }
        hscope_check_free(c);
    }
    /* without a [leaked] rule the last dump alone is judged */
    hscope_check_t *c = check("[total]\nmemsize = \"1 GB\"\n", sets[1], 3, 0);
    assert_null(hscope_check_no_verdict(c));
    hscope_check_free(c);
}

/* A rule naming a class the dump does not have: the closest names, a
 * warning, and no verdict with HSCOPE_CHECK_STRICT_NAMES. */
static void
test_unknown_names(void **state)
{
    (void)state;
    const char *paths[] = { path_c };
    const char *budget = "[class.\"Strin\"]\nobjects = 10\n[class.\"Zzzzzzzzzz\"]\nobjects = 1\n"
                         "[class.\"String\"]\nobjects = 10\n";
    hscope_check_t *c = check(budget, paths, 1, 0);
    hscope_check_rule r = HSCOPE_CHECK_RULE_INIT;
    assert_int_equal(hscope_check_rule_get(c, 0, &r), HSCOPE_OK);
    assert_int_equal(r.found, 0);
    assert_string_equal(r.closest, "String"); /* one deletion away; Array is 5 */
    assert_int_equal(hscope_check_rule_get(c, 1, &r), HSCOPE_OK);
    assert_int_equal(r.found, 0);
    assert_null(r.closest);                   /* nothing near */
    assert_int_equal(hscope_check_rule_get(c, 2, &r), HSCOPE_OK);
    assert_int_equal(r.found, 1);
    assert_null(r.closest);
    assert_non_null(strstr(hscope_check_warning_text(c),
                           "class.\"Strin\".objects: the dump has no class \"Strin\"; closest: String"));
    assert_null(hscope_check_no_verdict(c));
    hscope_check_free(c);
    c = check(budget, paths, 1, HSCOPE_CHECK_STRICT_NAMES);
    assert_non_null(hscope_check_no_verdict(c));
    assert_non_null(strstr(hscope_check_no_verdict(c), "class.\"Strin\".objects names a class "
                                                       "the dump does not have (closest: String)"));
    hscope_check_free(c);
}

static void
test_writers(void **state)
{
    (void)state;
    const char *paths[] = { path_a, path_b, path_c };
    hscope_check_t *c = check("[leaked]\nobjects = 0\n[total]\nmemsize = \"1 KB\"\n"
                              "[class.\"Str\\\"ing\"]\nobjects = 0\n",
                              paths, 3, 0);
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    const char *names[] = { "A", "B", "C" };
    ro.dump_names = names;
    ro.dump_name_count = 3;
    sink s = { .len = 0 };
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_check_write(c, &ro, to_sink, &s, &err), HSCOPE_OK);
    /* over first, by how much; the within ones after; the verdict last */
    const char *over = strstr(s.buf, "OVER leaked.objects");
    const char *ok = strstr(s.buf, "ok   total.memsize");
    assert_non_null(over);
    assert_non_null(ok);
    assert_true(over < ok);
    assert_non_null(strstr(over, "by 1 object"));
    assert_non_null(strstr(s.buf, "class.\"Str\\\"ing\".objects"));
    assert_non_null(strstr(s.buf, "(no such class in the dump)"));
    assert_non_null(strstr(s.buf, "against A, B, C"));
    assert_non_null(strstr(s.buf, "OVER BUDGET: 1 of 3 rules exceeded\n"));
    ro.format = HSCOPE_FORMAT_JSON;
    s.len = 0;
    assert_int_equal(hscope_check_write(c, &ro, to_sink, &s, &err), HSCOPE_OK);
    assert_non_null(strstr(s.buf, "{\"kind\":\"check\","));
    assert_non_null(strstr(s.buf, "\"within_budget\":false,\"verdict\":\"over\","
                                  "\"no_verdict\":null,\"rule_count\":3,\"over_count\":1,"
                                  "\"total\":{\"count\":7,\"memsize\":510},"
                                  "\"excluded_dumper_objects\":1,"
                                  "\"excluded_tracer\":{\"count\":0,\"memsize\":0},"
                                  "\"leaked\":{\"count\":1,\"memsize\":70},\"rules\":["));
    assert_non_null(strstr(s.buf, "{\"rule\":\"leaked.objects\",\"section\":\"leaked\","
                                  "\"key\":null,\"metric\":\"objects\",\"line\":2,\"limit\":0,"
                                  "\"actual\":1,\"over\":true,\"excess\":1,\"found\":true}"));
    ro.format = HSCOPE_FORMAT_CSV;
    assert_int_equal(hscope_check_write(c, &ro, to_sink, &s, &err), HSCOPE_ERR_UNSUPPORTED);
    ro.format = HSCOPE_FORMAT_TEXT;
    sink tiny = { .len = sizeof(tiny.buf) - 10 };
    assert_int_equal(hscope_check_write(c, &ro, to_sink, &tiny, &err), HSCOPE_ERR_IO);
    hscope_check_free(c);
    /* within budget */
    const char *one[] = { path_c };
    c = check("[total]\nobjects = 7\n", one, 1, 0);
    s.len = 0;
    ro.dump_names = NULL;
    ro.dump_name_count = 0;
    assert_int_equal(hscope_check_write(c, &ro, to_sink, &s, &err), HSCOPE_OK);
    assert_non_null(strstr(s.buf, "within budget: 1 rule, none exceeded\n"));
    assert_non_null(strstr(s.buf, "c.json"));
    hscope_check_free(c);
    assert_int_equal(hscope_check_write(NULL, &ro, to_sink, &s, &err), HSCOPE_ERR_INVALID_ARG);
    hscope_check_free(NULL);
    hscope_budget_free(NULL);
    assert_int_equal(hscope_check_rule_count(NULL), 0);
}

int
main(void)
{
    const char *base = getenv("HEAPSCOPE_WORK");
    snprintf(tmpdir, sizeof(tmpdir), "%s/check-api-XXXXXX", base ? base : "/tmp");
    if (base) {
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", base);
        if (system(cmd) != 0)
            return 1;
    }
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_dump),   cmocka_unit_test(test_paths_agree),
        cmocka_unit_test(test_leaked),     cmocka_unit_test(test_dump_count),
        cmocka_unit_test(test_values),     cmocka_unit_test(test_errors),
        cmocka_unit_test(test_writers),
        cmocka_unit_test(test_no_verdict),
        cmocka_unit_test(test_unknown_names),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    rmdir(tmpdir);
    return rc;
}
