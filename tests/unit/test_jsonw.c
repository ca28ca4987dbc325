/*
 * test_jsonw.c - the JSON string escaper of every --json writer
 * (src/report/jsonw.c) against escapes worked out by hand from RFC 8259
 * (quote, backslash and control characters escaped, \u00XX for the
 * controls without a short form and for DEL) and the script-safe rules of
 * jsonw.h (< > & ' U+2028 U+2029 as \u escapes, invalid UTF-8 as
 * \ufffd); plain runs longer than the output's buffer included.  Numbers,
 * addresses and keys against printf ("%llu", "%lld", "\"0x%llx\"") and
 * the escaper, compact and pretty.
 */
#include <inttypes.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "src/report/jsonw.h"
#include "src/report/out.h"

typedef struct sink {
    char *p;
    size_t len;
} sink;

static int32_t
sink_write(void *ud, const char *data, uint64_t len)
{
    sink *s = ud;
    s->p = realloc(s->p, s->len + (size_t)len + 1);
    if (!s->p)
        return -1;
    memcpy(s->p + s->len, data, (size_t)len);
    s->len += (size_t)len;
    s->p[s->len] = 0;
    return 0;
}

/* s[0..n) as one JSON string, script-safe or not, equals want[0..wn). */
static void
expect(int safe, const char *s, size_t n, const char *want, size_t wn)
{
    sink k = { NULL, 0 };
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope__out o;
    hscope__out_init(&o, sink_write, &k, &err);
    hscope__json w;
    hscope__json_init(&w, &o, 0);
    w.script_safe = safe;
    hscope__json_strn(&w, s, n);
    assert_int_equal(hscope__out_finish(&o), HSCOPE_OK);
    if (k.len != wn || memcmp(k.p, want, wn) != 0)
        fail_msg("safe=%d: got [%.*s], want [%.*s]", safe, (int)k.len, k.p ? k.p : "",
                 (int)wn, want);
    free(k.p);
}

#define EXPECT(safe, s, want) expect(safe, s, sizeof(s) - 1, want, sizeof(want) - 1)

static void
test_both_modes(void **state)
{
    (void)state;
    for (int safe = 0; safe <= 1; safe++) {
        EXPECT(safe, "", "\"\"");
        EXPECT(safe, "plain text 123", "\"plain text 123\"");
        EXPECT(safe, "a\"b\\c", "\"a\\\"b\\\\c\"");
        EXPECT(safe, "\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
        EXPECT(safe, "x\x01y\x1fz\x7f", "\"x\\u0001y\\u001fz\\u007f\"");
        EXPECT(safe, "a\0b", "\"a\\u0000b\"");
        /* two-byte UTF-8 (U+00E9) is valid in both modes, as it is */
        EXPECT(safe, "caf\xc3\xa9!", "\"caf\xc3\xa9!\"");
    }
}

static void
test_raw_mode(void **state)
{
    (void)state;
    /* without script-safety: < > & ' and every byte from 0x80 as they are */
    EXPECT(0, "<a href='x'>&", "\"<a href='x'>&\"");
    EXPECT(0, "bad \xff\xc3 end", "\"bad \xff\xc3 end\"");
    EXPECT(0, "\xe2\x80\xa8", "\"\xe2\x80\xa8\"");
}

static void
test_script_safe(void **state)
{
    (void)state;
    EXPECT(1, "<a href='x'>&", "\"\\u003ca href=\\u0027x\\u0027\\u003e\\u0026\"");
    EXPECT(1, "</script>", "\"\\u003c/script\\u003e\"");
    /* invalid bytes, one \ufffd each; a sequence cut at the end */
    EXPECT(1, "bad \xff end", "\"bad \\ufffd end\"");
    EXPECT(1, "cut \xc3", "\"cut \\ufffd\"");
    EXPECT(1, "\xc3\x28", "\"\\ufffd(\"");
    /* U+2028 and U+2029 (line and paragraph separators) */
    EXPECT(1, "a\xe2\x80\xa8" "b\xe2\x80\xa9", "\"a\\u2028b\\u2029\"");
    /* a four-byte sequence (U+1F600) as it is */
    EXPECT(1, "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
}

/* Plain runs longer than the output's own 8 KiB buffer, with an escape
 * on either side and in the middle. */
static void
test_long_runs(void **state)
{
    (void)state;
    size_t n = 20000;
    char *s = malloc(2 * n + 3), *want = malloc(2 * n + 16);
    assert_non_null(s);
    assert_non_null(want);
    for (int safe = 0; safe <= 1; safe++) {
        size_t k = 0, w = 0;
        s[k++] = '"';
        for (size_t i = 0; i < n; i++)
            s[k++] = (char)('a' + i % 26);
        s[k++] = '<';
        for (size_t i = 0; i < n; i++)
            s[k++] = (char)('0' + i % 10);
        want[w++] = '"';
        want[w++] = '\\';
        want[w++] = '"';
        memcpy(want + w, s + 1, n);
        w += n;
        if (safe) {
            memcpy(want + w, "\\u003c", 6);
            w += 6;
        } else {
            want[w++] = '<';
        }
        memcpy(want + w, s + n + 2, n);
        w += n;
        want[w++] = '"';
        expect(safe, s, k, want, w);
    }
    free(s);
    free(want);
}

/* One document of numbers, addresses and keys, compact or pretty, equals
 * the same built with printf and the string escaper. */
static void
numbers_and_keys(int pretty, int safe)
{
    static const uint64_t u[] = { 0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u,
                                  10000000000000000000u, UINT64_MAX };
    static const int64_t i[] = { 0, -1, 1, -9, -10, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
    /* plain keys, a key to escape, one longer than 64 bytes, and one
     * that only script-safety escapes */
    static const char *const keys[] = {
        "count", "a\"b", "k<", "",
        "a_key_longer_than_sixty_four_bytes_so_it_takes_the_escaping_path_x",
    };
    sink k = { NULL, 0 };
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope__out o;
    hscope__out_init(&o, sink_write, &k, &err);
    hscope__json w;
    hscope__json_init(&w, &o, pretty);
    w.script_safe = safe;
    char want[4096];
    size_t n = 0;
    const char *colon = pretty ? ": " : ":";
#define ADD(...) n += (size_t)snprintf(want + n, sizeof(want) - n, __VA_ARGS__)
#define SEP(first) ADD("%s%s", (first) ? "" : ",", pretty ? "\n  " : "")
    hscope__json_obj(&w);
    ADD("{");
    int first = 1;
    for (size_t j = 0; j < sizeof(u) / sizeof(u[0]); j++, first = 0) {
        hscope__json_ku64(&w, "u", u[j]);
        SEP(first);
        ADD("\"u\"%s%" PRIu64, colon, u[j]);
    }
    for (size_t j = 0; j < sizeof(i) / sizeof(i[0]); j++) {
        hscope__json_key(&w, "i");
        hscope__json_i64(&w, i[j]);
        SEP(0);
        ADD("\"i\"%s%" PRId64, colon, i[j]);
    }
    for (size_t j = 0; j < sizeof(u) / sizeof(u[0]); j++) {
        hscope__json_key(&w, "a");
        hscope__json_addr(&w, u[j]);
        SEP(0);
        ADD("\"a\"%s\"0x%" PRIx64 "\"", colon, u[j]);
    }
    for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
        hscope__json_key(&w, keys[j]);
        hscope__json_u64(&w, j);
        SEP(0);
        const char *q = strcmp(keys[j], "a\"b") == 0 ? "\"a\\\"b\""
                        : strcmp(keys[j], "k<") == 0 ? (safe ? "\"k\\u003c\"" : "\"k<\"")
                        : NULL;
        if (q)
            ADD("%s%s%zu", q, colon, j);
        else
            ADD("\"%s\"%s%zu", keys[j], colon, j);
    }
    hscope__json_end_obj(&w);
    ADD("%s}", pretty ? "\n" : "");
#undef SEP
#undef ADD
    assert_int_equal(hscope__out_finish(&o), HSCOPE_OK);
    if (k.len != n || memcmp(k.p, want, n) != 0)
        fail_msg("pretty=%d safe=%d: got [%.*s], want [%.*s]", pretty, safe, (int)k.len,
                 k.p ? k.p : "", (int)n, want);
    free(k.p);
}

static void
test_numbers_and_keys(void **state)
{
    (void)state;
    for (int pretty = 0; pretty <= 1; pretty++)
        for (int safe = 0; safe <= 1; safe++)
            numbers_and_keys(pretty, safe);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_modes),
        cmocka_unit_test(test_raw_mode),
        cmocka_unit_test(test_script_safe),
        cmocka_unit_test(test_long_runs),
        cmocka_unit_test(test_numbers_and_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
