/*
 * test_sort.c - white-box tests of the four-word key sort (src/core/sort.c)
 * against the C library's qsort with a plain lexicographic comparison: the
 * same keys must come out in the same order, whatever the size (below,
 * at and above the insertion runs, and over many merge passes), the ties
 * (few distinct values per word, so later words decide; keys equal in
 * every word) and the input order (random, sorted, reversed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/core/core.h"

/* the reference order: lexicographic, by qsort (equal keys are the same
 * bytes, so their order among themselves cannot show) */
static int
cmp_key(const void *x, const void *y)
{
    const hscope__key4 *a = x, *b = y;
    for (int i = 0; i < 4; i++)
        if (a->k[i] != b->k[i])
            return a->k[i] < b->k[i] ? -1 : 1;
    return 0;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t
next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

enum order { RANDOM, SORTED, REVERSED };

/* n keys whose words take `spread` values each (1: all equal) */
static void
check(size_t n, uint64_t spread, enum order ord)
{
    size_t m = n ? n : 1;
    hscope__key4 *a = malloc(m * sizeof(*a)), *tmp = malloc(m * sizeof(*tmp));
    hscope__key4 *want = malloc(m * sizeof(*want));
    assert_non_null(a);
    assert_non_null(tmp);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) {
        for (int w = 0; w < 4; w++)
            a[i].k[w] = next() % spread;
        /* the extremes of a word, where ~x and sign mistakes would show */
        if (i % 97 == 1)
            a[i].k[i % 4] = UINT64_MAX;
    }
    if (ord != RANDOM) {
        qsort(a, n, sizeof(*a), cmp_key);
        if (ord == REVERSED)
            for (size_t i = 0; i < n / 2; i++) {
                hscope__key4 x = a[i];
                a[i] = a[n - 1 - i];
                a[n - 1 - i] = x;
            }
    }
    memcpy(want, a, n * sizeof(*a));
    qsort(want, n, sizeof(*want), cmp_key);
    hscope__key4_sort(a, n, tmp);
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &want[i], sizeof(a[i])) != 0)
            fail_msg("n %zu spread %llu order %d: key %zu differs", n,
                     (unsigned long long)spread, (int)ord, i);
    free(a);
    free(tmp);
    free(want);
}

static void
test_sizes(void **state)
{
    (void)state;
    const size_t sizes[] = { 0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 100, 1000, 4096, 4097, 66721 };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int o = RANDOM; o <= REVERSED; o++) {
            check(sizes[i], UINT64_MAX, (enum order)o);
            check(sizes[i], 3, (enum order)o);
        }
}

static void
test_ties(void **state)
{
    (void)state;
    /* all equal; two values a word (the last word decides most pairs) */
    for (uint64_t spread = 1; spread <= 2; spread++)
        for (int o = RANDOM; o <= REVERSED; o++)
            check(5000, spread, (enum order)o);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_ties),
    };
    return cmocka_run_group_tests_name("sort", tests, NULL, NULL);
}
