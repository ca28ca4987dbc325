/*
 * test_rowcur.c - the row cursor's number and address formatters
 * (src/report/rowcur.h), which every row of the export's tables goes
 * through, against the C library's printf ("%llu", "0x%llx") on the
 * edges of every digit count: 0, each power of 10 and of 16 and the one
 * before it, the largest 64-bit value, and a million values spread over
 * the whole range; the returned end is where the digits stop.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "src/report/rowcur.h"

static void
check_value(uint64_t v)
{
    char got[64], want[64];
    memset(got, 'X', sizeof(got));
    char *end = hscope__put_u64(got, v);
    *end = 0;
    snprintf(want, sizeof(want), "%" PRIu64, v);
    assert_string_equal(got, want);
    memset(got, 'X', sizeof(got));
    end = hscope__put_addr(got, v);
    *end = 0;
    snprintf(want, sizeof(want), "0x%" PRIx64, v);
    assert_string_equal(got, want);
}

static void
test_digit_count_edges(void **state)
{
    (void)state;
    check_value(0);
    check_value(UINT64_MAX);
    for (uint64_t p = 1; p; p = p > UINT64_MAX / 10 ? 0 : p * 10) {
        check_value(p);
        check_value(p - 1);
        check_value(p + 1);
    }
    for (int s = 0; s < 64; s++) {
        uint64_t p = (uint64_t)1 << s;
        check_value(p);
        check_value(p - 1);
        check_value(p | (p >> 1));
    }
}

static void
test_spread(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        check_value(x >> (i % 64)); /* every digit count */
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digit_count_edges),
        cmocka_unit_test(test_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
