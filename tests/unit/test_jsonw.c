/*
 * test_jsonw.c - the JSON string escaper of every --json writer
 * (src/report/jsonw.c) against escapes worked out by hand from RFC 8259
 * (quote, backslash and control characters escaped, \u00XX for the
 * controls without a short form and for DEL) and the script-safe rules of
 * jsonw.h (< > & ' U+2028 U+2029 as \u escapes, invalid UTF-8 as
 * \ufffd); plain runs longer than the output's buffer included.
 */
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_modes),
        cmocka_unit_test(test_raw_mode),
        cmocka_unit_test(test_script_safe),
        cmocka_unit_test(test_long_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
